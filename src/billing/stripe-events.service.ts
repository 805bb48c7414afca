import { Injectable, Logger } from '@nestjs/common';
import type Stripe from 'stripe';
import type { EntityManager } from 'typeorm';
import { BillingRepository, type BillingChange, type TenantBilling } from './billing.repository.js';
import { BillingService, isEnded } from './billing.service.js';
import { isPaidPlan } from './billing.service.js';
import type { PlanId } from './plans.js';
import { StripeGateway } from './stripe.gateway.js';

export type EventOutcome = 'applied' | 'unchanged' | 'duplicate' | 'stale' | 'unknown_customer' | 'ignored';

const HANDLED = new Set([
  'checkout.session.completed',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.payment_failed',
]);

const idOf = (v: string | { id: string } | null | undefined): string | null =>
  v === null || v === undefined ? null : typeof v === 'string' ? v : v.id;

/** The billing row an event's subscription leads to; only what the event says, nothing guessed. */
function subscriptionChange(sub: Stripe.Subscription, planOfPrice: (id: string) => PlanId | null): BillingChange {
  const item = sub.items?.data?.[0];
  // API versions since 2025-03 carry the period on the item; older ones on the subscription itself.
  const legacy = sub as unknown as { current_period_start?: number; current_period_end?: number };
  const start = item?.current_period_start ?? legacy.current_period_start;
  const end = item?.current_period_end ?? legacy.current_period_end;
  const change: BillingChange = {
    stripe_subscription_id: sub.id,
    subscription_status: sub.status,
    cancel_at_period_end: sub.cancel_at_period_end,
    current_period_start: start ? new Date(start * 1000) : null,
    current_period_end: end ? new Date(end * 1000) : null,
  };
  const plan = planOfPrice(item?.price?.id ?? '');
  if (isEnded(sub.status)) change.plan_id = 'free';
  else if (plan && sub.status !== 'incomplete') change.plan_id = plan;
  return change;
}

/**
 * Applies verified Stripe events (M3). Each event id is applied once (billing_events); an event older
 * than the newest one applied to the tenant changes nothing; the tenant is the one whose Stripe
 * customer the event names, so one tenant's event never touches another. A plan change is audited.
 */
@Injectable()
export class StripeEventsService {
  private readonly logger = new Logger('StripeEvents');

  constructor(
    private readonly repo: BillingRepository,
    private readonly billing: BillingService,
    private readonly stripe: StripeGateway,
  ) {}

  async handle(event: Stripe.Event): Promise<EventOutcome> {
    const result = await this.repo.transaction((m) => this.apply(m, event));
    if (result.tenantId && result.outcome === 'applied') await this.billing.publish(result.tenantId);
    this.logger.log({
      msg: 'stripe event',
      event_id: event.id,
      type: event.type,
      tenant_id: result.tenantId,
      outcome: result.outcome,
    });
    return result.outcome;
  }

  private async apply(
    m: EntityManager,
    event: Stripe.Event,
  ): Promise<{ outcome: EventOutcome; tenantId: string | null }> {
    const created = new Date(event.created * 1000);
    const row = HANDLED.has(event.type) ? await this.tenantOf(m, event) : null;
    const decide = (): { outcome: EventOutcome; change?: BillingChange } => {
      if (!HANDLED.has(event.type)) return { outcome: 'ignored' };
      if (!row) return { outcome: 'unknown_customer' };
      if (row.stripe_state_at && created < row.stripe_state_at) return { outcome: 'stale' };
      const change = this.changeFor(event, row);
      return change ? { outcome: 'applied', change } : { outcome: 'unchanged' };
    };
    const { outcome, change } = decide();
    const fresh = await this.repo.recordEvent(m, {
      id: event.id,
      type: event.type,
      tenantId: row?.tenant_id ?? null,
      created,
      outcome,
    });
    if (!fresh) return { outcome: 'duplicate', tenantId: row?.tenant_id ?? null };
    if (!row || !change) return { outcome, tenantId: row?.tenant_id ?? null };
    await this.repo.update(m, row.tenant_id, { ...change, stripe_state_at: created });
    if (change.plan_id && change.plan_id !== row.plan_id) {
      await this.billing.recordChange(m, row.tenant_id, row.plan_id, change.plan_id, {
        actor: 'stripe',
        ip: null,
        source: 'stripe',
        eventId: event.id,
      });
    }
    return { outcome, tenantId: row.tenant_id };
  }

  /** The tenant whose Stripe customer the event names (locked for the change). */
  private async tenantOf(m: EntityManager, event: Stripe.Event): Promise<TenantBilling | null> {
    const obj = event.data.object as { customer?: string | { id: string } | null; client_reference_id?: string | null };
    const customer = idOf(obj.customer);
    if (!customer) return null;
    const row = await this.repo.findByCustomer(customer, m, true);
    // A Checkout Session also names its tenant: both must agree.
    if (row && event.type === 'checkout.session.completed' && obj.client_reference_id !== row.tenant_id) return null;
    return row;
  }

  private changeFor(event: Stripe.Event, row: TenantBilling): BillingChange | null {
    const planOfPrice = (id: string) => this.stripe.planOfPrice(id);
    // Stripe's event union is open-ended: the few types handled are picked out, the rest change nothing.
    if (event.type === 'checkout.session.completed') {
      const session = event.data.object;
      const plan = session.metadata?.plan;
      if (session.mode !== 'subscription' || !isPaidPlan(plan)) return null;
      if (session.status !== 'complete' || session.payment_status === 'unpaid') return null;
      return {
        plan_id: plan,
        stripe_subscription_id: idOf(session.subscription) ?? row.stripe_subscription_id,
        subscription_status: 'active',
      };
    }
    if (event.type === 'customer.subscription.created' || event.type === 'customer.subscription.updated') {
      return subscriptionChange(event.data.object, planOfPrice);
    }
    if (event.type === 'customer.subscription.deleted') {
      // Another (older) subscription of the customer ending does not end the current one.
      if (row.stripe_subscription_id && row.stripe_subscription_id !== event.data.object.id) return null;
      return {
        plan_id: 'free',
        subscription_status: 'canceled',
        stripe_subscription_id: null,
        current_period_start: null,
        current_period_end: null,
        cancel_at_period_end: false,
      };
    }
    if (event.type === 'invoice.payment_failed') {
      const sub = idOf(event.data.object.parent?.subscription_details?.subscription);
      if (!row.stripe_subscription_id || (sub && sub !== row.stripe_subscription_id)) return null;
      return { subscription_status: 'past_due' };
    }
    return null;
  }
}
