import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import type { TenantAuth } from '../auth/auth-context.js';
import { AppError } from '../common/errors.js';
import { TenantsRepository } from '../tenants/tenants.repository.js';
import { BillingRepository, type TenantBilling } from './billing.repository.js';
import type { BillingPlanDto, BillingUsageDto, PlanCatalogDto, TenantPlanInput } from './dto/billing.dto.js';
import { PAID_PLANS, type CustomLimits, type PaidPlanId, type PlanId } from './plans.js';
import { StripeGateway } from './stripe.gateway.js';
import { UsageMeter } from './usage-meter.service.js';

/** Who changed a plan, for the audit entry. */
export interface PlanChangeBy {
  actor: string;
  ip: string | null;
  source: 'admin' | 'stripe';
  eventId?: string;
}

/** Subscription states in which a paid plan is not (or no longer) in force. */
const ENDED = new Set(['canceled', 'unpaid', 'incomplete_expired']);
export const isEnded = (status: string | null): boolean => status !== null && ENDED.has(status);

/** Plans and usage as tenants see them, plan changes by operators, and Stripe Checkout and portal. */
@Injectable()
export class BillingService {
  constructor(
    private readonly repo: BillingRepository,
    private readonly meter: UsageMeter,
    private readonly stripe: StripeGateway,
    private readonly tenants: TenantsRepository,
    private readonly audit: AuditService,
  ) {}

  /** M3: a managed tenant starts on Free (same transaction as its creation). */
  async tenantCreated(m: EntityManager, tenantId: string): Promise<void> {
    await this.repo.ensure(m, tenantId, 'free');
  }

  private async billingOf(tenantId: string): Promise<TenantBilling> {
    await this.repo.ensure(this.repo.manager, tenantId);
    const row = await this.repo.findForTenant(tenantId);
    if (!row) throw AppError.notFound('Tenant');
    return row;
  }

  async plan(tenantId: string): Promise<BillingPlanDto> {
    const [row, usage] = await Promise.all([this.billingOf(tenantId), this.meter.snapshot(tenantId)]);
    const plan = await this.repo.plan(row.plan_id);
    return {
      plan: row.plan_id,
      name: plan.name,
      rpm: usage.limits.rpm,
      limits: {
        documents: usage.limits.documents,
        api_calls: usage.limits.api_calls,
        storage_bytes: usage.limits.storage_bytes,
      },
      subscription_status: row.subscription_status ?? 'none',
      current_period_end: usage.period.end.toISOString(),
      cancel_at_period_end: row.cancel_at_period_end,
    };
  }

  /** Every plan with its limits, smallest first, for a comparison before an upgrade. */
  async catalog(): Promise<PlanCatalogDto> {
    const [rows, prices] = await Promise.all([this.repo.plans(), this.stripe.planPrices()]);
    const plans = [...rows.values()];
    return {
      data: plans.map((p) => ({
        id: p.id,
        name: p.name,
        rpm: p.custom ? null : p.rpm,
        limits: { documents: p.documents, api_calls: p.api_calls, storage_bytes: p.storage_bytes },
        self_service: (PAID_PLANS as readonly string[]).includes(p.id),
        custom: p.custom,
        price: isPaidPlan(p.id) ? (prices[p.id] ?? null) : null,
      })),
    };
  }

  async usage(tenantId: string): Promise<BillingUsageDto> {
    const u = await this.meter.snapshot(tenantId);
    return {
      period: { start: u.period.start.toISOString(), end: u.period.end.toISOString() },
      documents_uploaded: u.documents_uploaded,
      documents_limit: u.limits.documents,
      api_calls: u.api_calls,
      api_calls_limit: u.limits.api_calls,
      storage_bytes: u.storage_bytes,
      storage_limit_bytes: u.limits.storage_bytes,
    };
  }

  /** Checkout and portal are for the tenant's owners and admins (a user token carrying that role). */
  private assertBillingManager(auth: TenantAuth): void {
    if (auth.kind !== 'tenant_jwt' || (auth.role !== 'owner' && auth.role !== 'admin')) {
      throw AppError.forbidden('Only an owner or admin of the organization manages billing');
    }
  }

  async checkout(auth: TenantAuth, plan: PaidPlanId): Promise<{ url: string }> {
    this.stripe.assertConfigured();
    this.assertBillingManager(auth);
    const row = await this.billingOf(auth.tenantId);
    if (row.stripe_subscription_id && !isEnded(row.subscription_status)) {
      throw AppError.conflict('The organization already has a subscription; change it in the billing portal');
    }
    const customerId = await this.customerFor(auth.tenantId, row);
    return { url: await this.stripe.checkoutUrl({ tenantId: auth.tenantId, customerId, plan }) };
  }

  async portal(auth: TenantAuth): Promise<{ url: string }> {
    this.stripe.assertConfigured();
    this.assertBillingManager(auth);
    const row = await this.billingOf(auth.tenantId);
    if (!row.stripe_customer_id) throw AppError.invalidState('No subscription yet: start one with checkout');
    return { url: await this.stripe.portalUrl(row.stripe_customer_id) };
  }

  /** One Stripe customer per tenant, created once: a concurrent creation loses to the row already set. */
  private async customerFor(tenantId: string, row: TenantBilling): Promise<string> {
    if (row.stripe_customer_id) return row.stripe_customer_id;
    const tenant = await this.tenants.findById(tenantId);
    if (!tenant) throw AppError.notFound('Tenant');
    const created = await this.stripe.createCustomer(tenant);
    return this.repo.transaction(async (m) => {
      const locked = await this.repo.findForTenant(tenantId, m, true);
      if (locked?.stripe_customer_id) return locked.stripe_customer_id;
      await this.repo.update(m, tenantId, { stripe_customer_id: created });
      return created;
    });
  }

  /**
   * PATCH /admin/tenants/:tenantId {plan, limits}: an operator sets the plan; Enterprise takes the
   * tenant's own limits. Runs inside the admin update's transaction; call `publish` after commit.
   */
  async setPlanByOperator(
    m: EntityManager,
    tenantId: string,
    input: TenantPlanInput,
    by: PlanChangeBy,
  ): Promise<boolean> {
    await this.repo.ensure(m, tenantId);
    const row = await this.repo.findForTenant(tenantId, m, true);
    if (!row) throw AppError.notFound('Tenant');
    const plan: PlanId = input.plan ?? row.plan_id;
    if (input.limits && plan !== 'enterprise') {
      throw AppError.badRequest('limits apply to the Enterprise plan only', [
        { path: '/limits', message: 'allowed only with plan enterprise' },
      ]);
    }
    const custom: CustomLimits | undefined = input.limits
      ? {
          documents: input.limits.documents ?? null,
          api_calls: input.limits.api_calls ?? null,
          storage_bytes: input.limits.storage_bytes ?? null,
        }
      : undefined;
    const limitsChanged = custom !== undefined && JSON.stringify(custom) !== JSON.stringify(row.custom);
    if (plan === row.plan_id && !limitsChanged) return false;
    await this.repo.update(m, tenantId, { plan_id: plan, ...(custom ? { custom } : {}) });
    await this.recordChange(m, tenantId, row.plan_id, plan, by, custom ? { limits: custom } : {});
    return true;
  }

  /** After a committed change: every instance reads the new limits from Redis at its next request. */
  publish(tenantId: string): Promise<void> {
    return this.meter.seed(tenantId);
  }

  async recordChange(
    m: EntityManager,
    tenantId: string,
    from: PlanId,
    to: PlanId,
    by: PlanChangeBy,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    await this.audit.record(m, {
      tenantId,
      action: 'billing.plan_change',
      actor: by.actor,
      ipAddress: by.ip,
      resourceId: tenantId,
      metadata: { from, to, source: by.source, ...(by.eventId ? { event_id: by.eventId } : {}), ...extra },
    });
  }
}

export const isPaidPlan = (v: unknown): v is PaidPlanId =>
  typeof v === 'string' && (PAID_PLANS as readonly string[]).includes(v);
