import { Global, Module } from '@nestjs/common';
import { TenantController } from './tenant.controller.js';
import { TenantsRepository } from './tenants.repository.js';

@Global()
@Module({ controllers: [TenantController], providers: [TenantsRepository], exports: [TenantsRepository] })
export class TenantsModule {}
