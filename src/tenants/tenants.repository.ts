import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { AUTH_TENANT_OMITS, Tenant, type AuthTenant } from './entities/tenant.entity.js';

@Injectable()
export class TenantsRepository {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  findById(id: string, manager: EntityManager = this.ds.manager): Promise<Tenant | null> {
    return manager.findOne(Tenant, { where: { id } });
  }

  /** The tenant for the authentication step (AuthTenant: without the IdP's metadata). */
  findForAuth(id: string): Promise<AuthTenant | null> {
    const omitted = new Set<string>(AUTH_TENANT_OMITS);
    const columns = this.ds.getMetadata(Tenant).columns.filter((c) => !omitted.has(c.propertyName));
    return this.ds.manager.findOne(Tenant, {
      select: Object.fromEntries(columns.map((c) => [c.propertyName, true])),
      where: { id },
    });
  }

  findBySlug(slug: string, manager: EntityManager = this.ds.manager): Promise<Tenant | null> {
    return manager.findOne(Tenant, { where: { slug } });
  }
}
