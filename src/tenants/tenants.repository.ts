import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { Tenant } from './entities/tenant.entity.js';

@Injectable()
export class TenantsRepository {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  findById(id: string, manager: EntityManager = this.ds.manager): Promise<Tenant | null> {
    return manager.findOne(Tenant, { where: { id } });
  }

  findBySlug(slug: string, manager: EntityManager = this.ds.manager): Promise<Tenant | null> {
    return manager.findOne(Tenant, { where: { slug } });
  }
}
