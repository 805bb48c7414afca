import { Inject, Injectable, Logger } from '@nestjs/common';
import Stripe from 'stripe';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { parsePlanPricesDisplay, priceOfStripe, type PlanPrice } from './plan-prices.js';
import { PAID_PLANS, type PaidPlanId } from './plans.js';

/** How long prices read from Stripe are reused; a failed read is tried again after a minute. */
const PRICES_FRESH_MS = 10 * 60_000;
const PRICES_RETRY_MS = 60_000;

type PlanPrices = Partial<Record<PaidPlanId, PlanPrice>>;

/** Stripe's signature tolerance: a webhook signed more than five minutes ago is refused. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  returnUrl: string;
  prices: Record<PaidPlanId, string>;
}

function settingsOf(config: AppConfig): StripeSettings | null {
  const e = config.env;
  if (!e.STRIPE_SECRET_KEY || !e.STRIPE_WEBHOOK_SECRET || !e.STRIPE_RETURN_URL) return null;
  if (!e.STRIPE_PRICE_DEVELOPER || !e.STRIPE_PRICE_TEAM || !e.STRIPE_PRICE_BUSINESS) return null;
  return {
    secretKey: e.STRIPE_SECRET_KEY,
    webhookSecret: e.STRIPE_WEBHOOK_SECRET,
    returnUrl: e.STRIPE_RETURN_URL,
    prices: { developer: e.STRIPE_PRICE_DEVELOPER, team: e.STRIPE_PRICE_TEAM, business: e.STRIPE_PRICE_BUSINESS },
  };
}

/** Client options for another API endpoint (STRIPE_API_BASE): Stripe's host, port and protocol settings. */
export function stripeEndpoint(base: string | undefined): {
  host?: string;
  port?: number;
  protocol?: 'http' | 'https';
} {
  if (!base) return {};
  const url = new URL(base);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname, port: Number(url.port || (protocol === 'http' ? 80 : 443)), protocol };
}

/**
 * The Stripe client, or null when Stripe is not configured (then checkout, portal and the webhook
 * answer 503 BILLING_NOT_CONFIGURED and everything else works).
 */
@Injectable()
export class StripeGateway {
  private readonly logger = new Logger(StripeGateway.name);
  private readonly settings: StripeSettings | null;
  private readonly client: Stripe | null;
  private readonly displayPrices: PlanPrices;
  private prices: { value: Promise<PlanPrices>; until: number } | null = null;

  constructor(@Inject(AppConfig) config: AppConfig) {
    this.settings = settingsOf(config);
    this.displayPrices = parsePlanPricesDisplay(config.env.PLAN_PRICES_DISPLAY);
    this.client = this.settings
      ? new Stripe(this.settings.secretKey, {
          ...stripeEndpoint(config.env.STRIPE_API_BASE),
          maxNetworkRetries: 2,
          timeout: 10_000,
          telemetry: false,
        })
      : null;
  }

  private require(): { stripe: Stripe; settings: StripeSettings } {
    if (!this.client || !this.settings) {
      throw AppError.of('BILLING_NOT_CONFIGURED', 'Billing is not configured on this deployment');
    }
    return { stripe: this.client, settings: this.settings };
  }

  /** Fails with 503 BILLING_NOT_CONFIGURED when Stripe is not set up. */
  assertConfigured(): void {
    this.require();
  }

  /** The plan a Stripe price id stands for (configured price ids), or null for a price of no plan. */
  planOfPrice(priceId: string | null | undefined): PaidPlanId | null {
    if (!this.settings || !priceId) return null;
    return PAID_PLANS.find((p) => this.settings!.prices[p] === priceId) ?? null;
  }

  /**
   * The paid plans' prices: with Stripe configured, its price objects for the configured price ids (read
   * at most every ten minutes; a plan whose price cannot be read has none), else PLAN_PRICES_DISPLAY's.
   */
  async planPrices(now = Date.now()): Promise<PlanPrices> {
    if (!this.client || !this.settings) return this.displayPrices;
    if (!this.prices || this.prices.until <= now) {
      const value = this.readPrices(this.client, this.settings);
      this.prices = { value, until: now + PRICES_FRESH_MS };
      void value.then((read) => {
        if (Object.keys(read).length < PAID_PLANS.length && this.prices?.value === value) {
          this.prices.until = now + PRICES_RETRY_MS;
        }
      });
    }
    return this.prices.value;
  }

  private async readPrices(stripe: Stripe, settings: StripeSettings): Promise<PlanPrices> {
    const out: PlanPrices = {};
    await Promise.all(
      PAID_PLANS.map(async (plan) => {
        try {
          const price = priceOfStripe(await stripe.prices.retrieve(settings.prices[plan]));
          if (price) out[plan] = price;
        } catch (err) {
          this.logger.warn({ msg: 'Stripe price not read', plan, error: String(err) });
        }
      }),
    );
    return out;
  }

  async createCustomer(tenant: { id: string; name: string; slug: string }): Promise<string> {
    const { stripe } = this.require();
    // The idempotency key makes a retried creation return the same customer (one customer per tenant).
    const customer = await stripe.customers.create(
      { name: tenant.name, metadata: { tenant_id: tenant.id, tenant_slug: tenant.slug } },
      { idempotencyKey: `customer-${tenant.id}` },
    );
    return customer.id;
  }

  async checkoutUrl(input: { tenantId: string; customerId: string; plan: PaidPlanId }): Promise<string> {
    const { stripe, settings } = this.require();
    const session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      customer: input.customerId,
      client_reference_id: input.tenantId,
      line_items: [{ price: settings.prices[input.plan], quantity: 1 }],
      success_url: withQuery(settings.returnUrl, 'checkout', 'success'),
      cancel_url: withQuery(settings.returnUrl, 'checkout', 'cancel'),
      metadata: { tenant_id: input.tenantId, plan: input.plan },
      subscription_data: { metadata: { tenant_id: input.tenantId, plan: input.plan } },
    });
    if (!session.url) throw new Error('Stripe returned a Checkout Session without a url');
    return session.url;
  }

  async portalUrl(customerId: string): Promise<string> {
    const { stripe, settings } = this.require();
    const session = await stripe.billingPortal.sessions.create({
      customer: customerId,
      return_url: settings.returnUrl,
    });
    return session.url;
  }

  /** Verifies Stripe-Signature over the raw bytes (5-minute tolerance); a failure is 400 and nothing else happens. */
  verifyEvent(rawBody: Buffer | undefined, signature: string | undefined): Stripe.Event {
    const { stripe, settings } = this.require();
    if (!rawBody || !signature) {
      throw AppError.badRequest('A signed Stripe event is required', [
        { path: '/headers/stripe-signature', message: 'is required' },
      ]);
    }
    try {
      return stripe.webhooks.constructEvent(rawBody, signature, settings.webhookSecret, WEBHOOK_TOLERANCE_SECONDS);
    } catch {
      throw AppError.badRequest('Stripe signature verification failed', [
        { path: '/headers/stripe-signature', message: 'does not verify, or the event is too old' },
      ]);
    }
  }
}

function withQuery(base: string, key: string, value: string): string {
  const url = new URL(base);
  url.searchParams.set(key, value);
  return url.toString();
}
