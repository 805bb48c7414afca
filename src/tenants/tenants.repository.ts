import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { authTenantColumns, Tenant, type AuthTenant } from './entities/tenant.entity.js';

@Injectable()
export class TenantsRepository {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  findById(id: string, manager: EntityManager = this.ds.manager): Promise<Tenant | null> {
    return manager.findOne(Tenant, { where: { id } });
  }

  private authSelect: Record<string, true> | undefined;

  /** The tenant for the authentication step (AuthTenant: without the IdP's metadata). */
  findForAuth(id: string): Promise<AuthTenant | null> {
    this.authSelect ??= Object.fromEntries(authTenantColumns(this.ds).map((c) => [c.propertyName, true] as const));
    return this.ds.manager.findOne(Tenant, { select: this.authSelect, where: { id } });
  }

  findBySlug(slug: string, manager: EntityManager = this.ds.manager): Promise<Tenant | null> {
    return manager.findOne(Tenant, { where: { slug } });
  }
}
