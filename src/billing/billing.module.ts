import { Global, Module } from '@nestjs/common';
import { AdminModule } from '../admin/admin.module.js';
import { TenantLifecycle } from '../admin/tenant-lifecycle.js';
import { UsageMetering } from '../rate-limit/usage-metering.js';
import { BillingController, StripeWebhookController } from './billing.controller.js';
import { BillingRepository } from './billing.repository.js';
import { BillingService } from './billing.service.js';
import { StripeEventsService } from './stripe-events.service.js';
import { StripeGateway } from './stripe.gateway.js';
import { UsageFlusher } from './usage-flusher.js';
import { UsageMeter } from './usage-meter.service.js';

/**
 * M3: plans, usage metering, quotas and Stripe. Imported by AppModule only on the managed deployment;
 * global so that the core finds the meter as its usage metering port (rate limit, uploads, signing,
 * deletes) and the admin API's plan settings find the service. Self-hosted, `UnmeteredUsageModule`
 * provides the port instead and no quota ever applies.
 */
@Global()
@Module({
  imports: [AdminModule],
  controllers: [BillingController, StripeWebhookController],
  providers: [
    BillingRepository,
    BillingService,
    StripeEventsService,
    StripeGateway,
    UsageMeter,
    UsageFlusher,
    { provide: UsageMetering, useExisting: UsageMeter },
  ],
  exports: [BillingService, UsageMeter, UsageFlusher, UsageMetering],
})
export class BillingModule {
  constructor(lifecycle: TenantLifecycle, billing: BillingService) {
    // M3: a tenant starts on Free.
    lifecycle.onTenantCreated((m, tenant) => billing.tenantCreated(m, tenant.id));
  }
}
