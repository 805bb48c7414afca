import { PAID_PLANS, type PaidPlanId } from './plans.js';

/** A paid plan's price: `unit_amount` in the currency's smallest unit (cents), as Stripe gives it. */
export interface PlanPrice {
  unit_amount: number;
  /** ISO 4217, upper case. */
  currency: string;
  interval: 'day' | 'week' | 'month' | 'year';
  interval_count: number;
}

const INTERVALS = ['day', 'week', 'month', 'year'] as const;

/** One entry of PLAN_PRICES_DISPLAY: `team=99 EUR/month`, `business=1990.50 USD/year`. */
const ENTRY = /^(developer|team|business)=(\d{1,9}(?:\.\d{1,3})?) ([A-Za-z]{3})\/(day|week|month|year)$/;

/** The number of decimals of a currency's smallest unit (EUR 2, JPY 0); 2 for a code Intl does not know. */
export function currencyDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/**
 * PLAN_PRICES_DISPLAY, the prices shown on the plan page where Stripe is not configured:
 * `developer=19 EUR/month,team=99 EUR/month,business=399 EUR/month`. A plan it leaves out has no price shown.
 */
export function parsePlanPricesDisplay(value: string | undefined): Partial<Record<PaidPlanId, PlanPrice>> {
  const out: Partial<Record<PaidPlanId, PlanPrice>> = {};
  if (!value) return out;
  for (const raw of value.split(',')) {
    const m = ENTRY.exec(raw.trim());
    if (!m) continue;
    const currency = m[3]!.toUpperCase();
    out[m[1] as PaidPlanId] = {
      unit_amount: Math.round(Number(m[2]) * 10 ** currencyDigits(currency)),
      currency,
      interval: m[4] as PlanPrice['interval'],
      interval_count: 1,
    };
  }
  return out;
}

/** The part of a Stripe Price object the plan page shows; null for a price without a fixed recurring amount. */
export function priceOfStripe(price: {
  unit_amount: number | null;
  currency: string;
  recurring: { interval: string; interval_count: number } | null;
}): PlanPrice | null {
  if (price.unit_amount === null || !price.recurring) return null;
  const interval = price.recurring.interval as PlanPrice['interval'];
  if (!(INTERVALS as readonly string[]).includes(interval)) return null;
  return {
    unit_amount: price.unit_amount,
    currency: price.currency.toUpperCase(),
    interval,
    interval_count: price.recurring.interval_count,
  };
}

export const isPaid = (id: string): id is PaidPlanId => (PAID_PLANS as readonly string[]).includes(id);
