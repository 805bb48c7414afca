import { Global, Module } from '@nestjs/common';
import { BillingController, StripeWebhookController } from './billing.controller.js';
import { BillingRepository } from './billing.repository.js';
import { BillingService } from './billing.service.js';
import { StripeEventsService } from './stripe-events.service.js';
import { StripeGateway } from './stripe.gateway.js';
import { UsageFlusher } from './usage-flusher.js';
import { UsageMeter } from './usage-meter.service.js';

/**
 * M3: plans, usage metering, quotas and Stripe. Imported by AppModule only on the managed deployment;
 * global so that the rate limiter, uploads, signing and the admin API find the meter and the service
 * (they inject them as optional: self-hosted, they are absent and no quota ever applies).
 */
@Global()
@Module({
  controllers: [BillingController, StripeWebhookController],
  providers: [BillingRepository, BillingService, StripeEventsService, StripeGateway, UsageMeter, UsageFlusher],
  exports: [BillingService, UsageMeter, UsageFlusher],
})
export class BillingModule {}
