import type { Schemas } from '../api/client.js';

const NAMES: Record<string, string> = {
  free: 'Free',
  developer: 'Developer',
  team: 'Team',
  business: 'Business',
  enterprise: 'Enterprise',
};

/** A plan's name as every page writes it ("Team", never "team"), from its id. */
export function planName(id: string): string {
  return NAMES[id] ?? id.charAt(0).toUpperCase() + id.slice(1);
}

const PERIODS: Record<Schemas['PlanPriceDto']['interval'], [string, string]> = {
  day: ['day', 'days'],
  week: ['week', 'weeks'],
  month: ['month', 'months'],
  year: ['year', 'years'],
};

/** A price as the plan page shows it: the amount in its currency, and the period ("€99.00 a month"). */
export function formatPrice(price: Schemas['PlanPriceDto']): { amount: string; period: string } {
  let amount: string;
  try {
    const format = new Intl.NumberFormat(undefined, { style: 'currency', currency: price.currency });
    const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
    amount = format.format(price.unit_amount / 10 ** digits);
  } catch {
    amount = `${(price.unit_amount / 100).toFixed(2)} ${price.currency}`;
  }
  const [one, many] = PERIODS[price.interval];
  const period = price.interval_count === 1 ? `a ${one}` : `every ${price.interval_count} ${many}`;
  return { amount, period };
}
