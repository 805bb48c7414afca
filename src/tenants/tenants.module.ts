import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Tenant } from './entities/tenant.entity.js';
import { TenantController } from './tenant.controller.js';
import { TenantsRepository } from './tenants.repository.js';

/** The entities this module owns (also read by the migration data source). */
export const tenantsEntities = [Tenant];

@Global()
@Module({
  imports: [TypeOrmModule.forFeature(tenantsEntities)],
  controllers: [TenantController],
  providers: [TenantsRepository],
  exports: [TenantsRepository],
})
export class TenantsModule {}
