import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { SigningKeysService } from '../signing/signing-keys.service.js';
import type { Tenant } from '../tenants/entities/tenant.entity.js';

/** What a module makes for a new tenant, in the tenant's creating transaction. */
export type TenantCreatedHook = (m: EntityManager, tenant: Tenant) => Promise<void>;

/**
 * What else happens, in the same transaction, when a tenant is created: its first signing key (S8), then
 * what the modules that own per-tenant state register (M3: billing starts a managed tenant on Free).
 */
@Injectable()
export class TenantLifecycle {
  private readonly created: TenantCreatedHook[] = [];

  constructor(private readonly signingKeys: SigningKeysService) {}

  onTenantCreated(hook: TenantCreatedHook): void {
    this.created.push(hook);
  }

  async tenantCreated(m: EntityManager, tenant: Tenant): Promise<void> {
    await this.signingKeys.createInitialKey(m, tenant.id);
    for (const hook of this.created) await hook(m, tenant);
  }
}
