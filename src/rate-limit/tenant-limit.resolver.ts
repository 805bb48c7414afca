import { Injectable } from '@nestjs/common';
import type { AuthTenant } from '../tenants/entities/tenant.entity.js';

/**
 * S12: the limit that applies to a tenant on the self-hosted deployment: its `rate_limit_rpm`. On the
 * managed deployment the usage meter (billing) applies the plan's rpm instead, read from Redis together
 * with the window count, so a plan change reaches every instance at once.
 */
@Injectable()
export class TenantLimitResolver {
  rpmFor(tenant: AuthTenant): Promise<number> | number {
    return tenant.rate_limit_rpm;
  }
}
