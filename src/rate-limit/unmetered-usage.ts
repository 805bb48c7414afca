import { Global, Injectable, Module } from '@nestjs/common';
import type { AuthTenant } from '../tenants/entities/tenant.entity.js';
import { RateLimitModule } from './rate-limit.module.js';
import { RateLimitService } from './rate-limit.service.js';
import { TenantLimitResolver } from './tenant-limit.resolver.js';
import { UsageMetering, type MeteredDecision, type Reservation } from './usage-metering.js';

/**
 * The self-hosted deployment's usage metering: nothing is counted and no quota applies; a request is
 * held to its tenant's own rate limit (S12).
 */
@Injectable()
export class UnmeteredUsage extends UsageMetering {
  constructor(
    private readonly limiter: RateLimitService,
    private readonly limits: TenantLimitResolver,
  ) {
    super();
  }

  async consumeRequest(tenant: AuthTenant): Promise<MeteredDecision> {
    return this.limiter.consume(tenant.id, await this.limits.rpmFor(tenant));
  }

  reserveUpload(_tenantId: string, bytes: number): Promise<Reservation> {
    return Promise.resolve({ ok: true, periodStart: '', bytes });
  }

  release(): Promise<void> {
    return Promise.resolve();
  }

  readonly recordsStorageChanges = false;

  countStorageChanges(): Promise<void> {
    return Promise.resolve();
  }

  auditRefusal(): Promise<void> {
    return Promise.resolve();
  }
}

/** Provides `UnmeteredUsage` as the usage metering port where no managed module provides its own. */
@Global()
@Module({
  imports: [RateLimitModule],
  providers: [{ provide: UsageMetering, useClass: UnmeteredUsage }],
  exports: [UsageMetering],
})
export class UnmeteredUsageModule {}
