import { Injectable, Optional } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { BillingService } from '../billing/billing.service.js';
import { SigningKeysService } from '../signing/signing-keys.service.js';
import type { Tenant } from '../tenants/entities/tenant.entity.js';

/**
 * What else happens, in the same transaction, when a tenant is created (S8: its first signing key;
 * M3: the Free plan on the managed deployment).
 * Feature modules that own per-tenant state extend this in one place.
 */
@Injectable()
export class TenantLifecycle {
  constructor(
    private readonly signingKeys: SigningKeysService,
    @Optional() private readonly billing?: BillingService,
  ) {}

  async tenantCreated(m: EntityManager, tenant: Tenant): Promise<void> {
    await this.signingKeys.createInitialKey(m, tenant.id);
    // M3: on the managed deployment a tenant starts on Free.
    await this.billing?.tenantCreated(m, tenant.id);
  }
}
