import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { SigningKeysModule } from '../signing/signing-keys.module.js';
import { AdminController } from './admin.controller.js';
import { AdminService } from './admin.service.js';
import { TenantLifecycle } from './tenant-lifecycle.js';

@Module({
  imports: [AuthModule, SigningKeysModule],
  controllers: [AdminController],
  providers: [AdminService, TenantLifecycle],
  exports: [AdminService],
})
export class AdminModule {}
