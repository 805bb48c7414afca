/** M3: the plans. Their numbers live in the `plans` table (seeded by migration); these are the ids. */
export const PLAN_IDS = ['free', 'developer', 'team', 'business', 'enterprise'] as const;
export type PlanId = (typeof PLAN_IDS)[number];
export const PAID_PLANS = ['developer', 'team', 'business'] as const;
export type PaidPlanId = (typeof PAID_PLANS)[number];

export function isPlanId(v: unknown): v is PlanId {
  return typeof v === 'string' && (PLAN_IDS as readonly string[]).includes(v);
}

/** What a tenant may do per billing period; null means no limit. */
export interface Limits {
  rpm: number;
  documents: number | null;
  api_calls: number | null;
  storage_bytes: number | null;
}

export interface PlanRow {
  id: PlanId;
  name: string;
  rpm: number | null;
  documents: number | null;
  api_calls: number | null;
  storage_bytes: number | null;
  custom: boolean;
}

export interface CustomLimits {
  documents: number | null;
  api_calls: number | null;
  storage_bytes: number | null;
}

/**
 * The limits in force. Enterprise takes the tenant's own values (M3), its rpm being the tenant's
 * `rate_limit_rpm` (S12); a value the operator left unset is no limit.
 */
export function effectiveLimits(plan: PlanRow, custom: CustomLimits, tenantRpm: number): Limits {
  if (plan.custom) {
    return {
      rpm: tenantRpm,
      documents: custom.documents,
      api_calls: custom.api_calls,
      storage_bytes: custom.storage_bytes,
    };
  }
  return {
    rpm: plan.rpm ?? tenantRpm,
    documents: plan.documents,
    api_calls: plan.api_calls,
    storage_bytes: plan.storage_bytes,
  };
}

export interface Period {
  start: Date;
  end: Date;
}

/** The calendar month (UTC) holding `now`: the period of a tenant without a paid subscription. */
export function calendarMonth(now: Date): Period {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start, end };
}

/**
 * The billing period holding `now`: the subscription's while `now` lies inside it, else the calendar
 * month (a tenant on Free, or a subscription whose renewal has not been reported yet).
 */
export function periodAt(now: Date, subscription: Period | null): Period {
  if (subscription && subscription.start <= now && now < subscription.end) return subscription;
  return calendarMonth(now);
}
