import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { SigningKeysService } from '../signing/signing-keys.service.js';
import type { Tenant } from '../tenants/entities/tenant.entity.js';

/**
 * What else happens, in the same transaction, when a tenant is created (S8: its first signing key).
 * Feature modules that own per-tenant state extend this in one place.
 */
@Injectable()
export class TenantLifecycle {
  constructor(private readonly signingKeys: SigningKeysService) {}

  async tenantCreated(m: EntityManager, tenant: Tenant): Promise<void> {
    await this.signingKeys.createInitialKey(m, tenant.id);
  }
}
