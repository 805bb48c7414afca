import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { SamlModule } from '../saml/saml.module.js';
import { SigningKeysModule } from '../signing/signing-keys.module.js';
import { AdminController } from './admin.controller.js';
import { AdminService } from './admin.service.js';
import { TenantLifecycle } from './tenant-lifecycle.js';

@Module({
  imports: [AuthModule, SigningKeysModule, SamlModule],
  controllers: [AdminController],
  providers: [AdminService, TenantLifecycle],
  exports: [AdminService, TenantLifecycle],
})
export class AdminModule {}
