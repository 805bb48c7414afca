import { Injectable } from '@nestjs/common';
import type { Tenant } from '../tenants/entities/tenant.entity.js';

/**
 * S12: the limit that applies to a tenant. Self-hosted: the tenant's `rate_limit_rpm`. The managed
 * deployment's plans (M3) override this provider.
 */
@Injectable()
export class TenantLimitResolver {
  rpmFor(tenant: Tenant): Promise<number> | number {
    return tenant.rate_limit_rpm;
  }
}
