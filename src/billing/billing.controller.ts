import { Body, Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import {
  ApiBody,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import type { TenantAuth } from '../auth/auth-context.js';
import { Public, Tenant, TenantEndpoint } from '../auth/decorators.js';
import { ErrorResponseDto } from '../common/error-response.dto.js';
import { ApiError, ERRORS, JsonBodyErrors } from '../openapi/decorators.js';
import { Unmetered } from '../rate-limit/unmetered.js';
import { BillingService } from './billing.service.js';
import { BillingPlanDto, BillingUsageDto, CheckoutDto, PlanCatalogDto, UrlDto } from './dto/billing.dto.js';
import { StripeEventsService } from './stripe-events.service.js';
import { StripeGateway } from './stripe.gateway.js';

const NotConfigured = () =>
  ApiServiceUnavailableResponse({
    type: ErrorResponseDto,
    description: 'BILLING_NOT_CONFIGURED: Stripe is not set up',
    example: {
      error: { code: 'BILLING_NOT_CONFIGURED', message: 'Billing is not configured on this deployment', details: [] },
    },
  });
// Replaces TenantEndpoint's 403 on the method, so it names both refusals.
const OwnerOrAdmin = () =>
  ApiError(
    403,
    "Not an owner's or admin's user token (an API key, a service JWT, a member), or an admin JWT",
    {
      name: 'not_a_manager',
      code: 'FORBIDDEN',
      message: 'Only an owner or admin of the organization manages billing',
    },
    ERRORS.adminTokenOnTenantPath,
  );

class StripeReceivedDto {
  @ApiProperty({ enum: [true], example: true }) received: true;
}

/** M3, managed deployment only: the tenant's plan and usage, Stripe Checkout and the customer portal. */
@ApiTags('billing')
@TenantEndpoint({ metered: false })
@Unmetered()
@Controller('v1/billing')
export class BillingController {
  constructor(private readonly billing: BillingService) {}

  @Get('plan')
  @ApiOperation({
    summary: 'The current plan, its limits and rate, and the subscription',
    description:
      "The tenant's plan with its quotas per billing period and its rate limit, and the state of its Stripe " +
      'subscription. Reading it spends no API call.',
  })
  @ApiOkResponse({ type: BillingPlanDto })
  plan(@Tenant() auth: TenantAuth): Promise<BillingPlanDto> {
    return this.billing.plan(auth.tenantId);
  }

  @Get('plans')
  @ApiOperation({
    summary: 'Every plan with its limits and rate, to compare before an upgrade',
    description:
      'From the smallest plan to the largest, each with its quotas per billing period and its rate limit; the ' +
      'self-service ones can be bought through POST /v1/billing/checkout, the custom one is agreed with the ' +
      'operator. Reading it spends no API call.',
  })
  @ApiOkResponse({ type: PlanCatalogDto })
  plans(): Promise<PlanCatalogDto> {
    return this.billing.catalog();
  }

  @Get('usage')
  @ApiOperation({
    summary: 'Usage of the current billing period against the plan',
    description:
      'Documents uploaded and API calls made in the current billing period and bytes stored now, each beside ' +
      'its plan limit (null: none). Reading it spends no API call.',
  })
  @ApiOkResponse({ type: BillingUsageDto })
  usage(@Tenant() auth: TenantAuth): Promise<BillingUsageDto> {
    return this.billing.usage(auth.tenantId);
  }

  @Post('checkout')
  @HttpCode(200)
  @ApiOperation({
    summary: 'A Stripe Checkout Session for a paid plan; the plan changes when Stripe reports payment',
    description:
      'Answers the URL of a Stripe Checkout Session to send the user to. Nothing changes until Stripe reports ' +
      'the payment through the webhook. An organization with a running subscription changes it in the portal.',
  })
  @ApiOkResponse({ type: UrlDto })
  @JsonBodyErrors('Not a paid plan')
  @OwnerOrAdmin()
  @ApiError(409, 'The organization already has a subscription', {
    name: 'subscribed',
    code: 'CONFLICT',
    message: 'The organization already has a subscription; change it in the billing portal',
  })
  @NotConfigured()
  checkout(@Tenant() auth: TenantAuth, @Body() body: CheckoutDto): Promise<UrlDto> {
    return this.billing.checkout(auth, body.plan);
  }

  @Post('portal')
  @HttpCode(200)
  @ApiOperation({
    summary: 'A Stripe customer portal session (invoices, payment method, plan change, cancellation)',
    description:
      "Answers the URL of a Stripe customer portal session for the organization's subscription; changes made " +
      'there reach the service through the webhook.',
  })
  @ApiOkResponse({ type: UrlDto })
  @OwnerOrAdmin()
  @ApiError(409, 'No subscription yet', {
    name: 'no_subscription',
    code: 'INVALID_STATE',
    message: 'No subscription yet: start one with checkout',
  })
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
  @ApiOperation({
    summary: 'Stripe webhook endpoint (signed by Stripe)',
    description:
      "Stripe's events about subscriptions and payments, verified with Stripe-Signature over the raw body; they " +
      'change the plan and the subscription state. No tenant credentials. An event seen before is acknowledged ' +
      'and not applied twice.',
  })
  @ApiHeader({
    name: 'Stripe-Signature',
    required: true,
    description: "Stripe's signature over the raw body",
    example: 't=1773581400,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
  })
  @ApiBody({
    description: 'A Stripe event',
    schema: {
      type: 'object',
      additionalProperties: true,
      example: { id: 'evt_1QxYz2AbCdEfGh', type: 'customer.subscription.updated', data: { object: {} } },
    },
  })
  @ApiOkResponse({ type: StripeReceivedDto })
  @JsonBodyErrors('Missing, forged or stale signature; nothing changed', {
    name: 'bad_signature',
    code: 'VALIDATION_ERROR',
    message: 'Stripe signature verification failed',
    details: [{ path: '/headers/stripe-signature', message: 'does not verify, or the event is too old' }],
  })
  @NotConfigured()
  async webhook(@Req() req: Request & { rawBody?: Buffer }): Promise<{ received: true }> {
    // Read from the request: @Headers() would list the header a second time in the OpenAPI document.
    const event = this.stripe.verifyEvent(req.rawBody, req.get('stripe-signature'));
    await this.events.handle(event);
    return { received: true };
  }
}
