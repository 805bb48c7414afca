import { Body, Controller, Get, Headers, HttpCode, Post, Req } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import type { TenantAuth } from '../auth/auth-context.js';
import { Public, Tenant, TenantEndpoint } from '../auth/decorators.js';
import { ErrorResponseDto } from '../common/error-response.dto.js';
import { Unmetered } from '../rate-limit/unmetered.js';
import { BillingService } from './billing.service.js';
import { BillingPlanDto, BillingUsageDto, CheckoutDto, UrlDto } from './dto/billing.dto.js';
import { StripeEventsService } from './stripe-events.service.js';
import { StripeGateway } from './stripe.gateway.js';

const NotConfigured = () =>
  ApiServiceUnavailableResponse({
    type: ErrorResponseDto,
    description: 'BILLING_NOT_CONFIGURED: Stripe is not set up',
  });
const OwnerOrAdmin = () =>
  ApiForbiddenResponse({
    type: ErrorResponseDto,
    description: 'Only an owner or admin of the organization (user token)',
  });

/** M3, managed deployment only: the tenant's plan and usage, Stripe Checkout and the customer portal. */
@ApiTags('billing')
@TenantEndpoint()
@Unmetered()
@Controller('v1/billing')
export class BillingController {
  constructor(private readonly billing: BillingService) {}

  @Get('plan')
  @ApiOperation({ summary: 'The current plan, its limits and rate, and the subscription' })
  @ApiOkResponse({ type: BillingPlanDto })
  plan(@Tenant() auth: TenantAuth): Promise<BillingPlanDto> {
    return this.billing.plan(auth.tenantId);
  }

  @Get('usage')
  @ApiOperation({ summary: 'Usage of the current billing period against the plan' })
  @ApiOkResponse({ type: BillingUsageDto })
  usage(@Tenant() auth: TenantAuth): Promise<BillingUsageDto> {
    return this.billing.usage(auth.tenantId);
  }

  @Post('checkout')
  @HttpCode(200)
  @ApiOperation({ summary: 'A Stripe Checkout Session for a paid plan; the plan changes when Stripe reports payment' })
  @ApiOkResponse({ type: UrlDto })
  @OwnerOrAdmin()
  @NotConfigured()
  checkout(@Tenant() auth: TenantAuth, @Body() body: CheckoutDto): Promise<UrlDto> {
    return this.billing.checkout(auth, body.plan);
  }

  @Post('portal')
  @HttpCode(200)
  @ApiOperation({ summary: 'A Stripe customer portal session (invoices, payment method, plan change, cancellation)' })
  @ApiOkResponse({ type: UrlDto })
  @OwnerOrAdmin()
  @NotConfigured()
  portal(@Tenant() auth: TenantAuth): Promise<UrlDto> {
    return this.billing.portal(auth);
  }
}

/** Stripe's calls: no tenant credentials, the Stripe-Signature over the raw body instead. */
@ApiTags('billing')
@Controller('v1/billing')
export class StripeWebhookController {
  constructor(
    private readonly stripe: StripeGateway,
    private readonly events: StripeEventsService,
  ) {}

  @Post('webhook')
  @Public()
  @HttpCode(200)
  @ApiOperation({ summary: 'Stripe webhook endpoint (signed by Stripe)' })
  @ApiOkResponse({ schema: { type: 'object', properties: { received: { type: 'boolean' } } } })
  @ApiBadRequestResponse({ type: ErrorResponseDto, description: 'Missing, forged or stale signature; nothing changed' })
  @NotConfigured()
  async webhook(
    @Req() req: Request & { rawBody?: Buffer },
    @Headers('stripe-signature') signature?: string,
  ): Promise<{ received: true }> {
    const event = this.stripe.verifyEvent(req.rawBody, signature);
    await this.events.handle(event);
    return { received: true };
  }
}
