import { describe, expect, it } from 'vitest';
import { parseEnv } from '../config/env.js';
import { parsePlanPricesDisplay, priceOfStripe } from './plan-prices.js';

describe('plan prices', () => {
  it('PLAN_PRICES_DISPLAY: amounts in the smallest unit of each currency, plans left out have none', () => {
    expect(parsePlanPricesDisplay('developer=19 EUR/month, team=99.50 usd/month,business=3990 JPY/year')).toEqual({
      developer: { unit_amount: 1900, currency: 'EUR', interval: 'month', interval_count: 1 },
      team: { unit_amount: 9950, currency: 'USD', interval: 'month', interval_count: 1 },
      business: { unit_amount: 3990, currency: 'JPY', interval: 'year', interval_count: 1 },
    });
    expect(parsePlanPricesDisplay('team=99 EUR/month')).toEqual({
      team: { unit_amount: 9900, currency: 'EUR', interval: 'month', interval_count: 1 },
    });
    expect(parsePlanPricesDisplay(undefined)).toEqual({});
  });

  it('a malformed PLAN_PRICES_DISPLAY is refused at start, the setting named', () => {
    expect(() => parseEnv({ PLAN_PRICES_DISPLAY: 'team=ninety-nine' })).toThrow(/PLAN_PRICES_DISPLAY/);
    expect(() => parseEnv({ PLAN_PRICES_DISPLAY: 'gold=9 EUR/month' })).toThrow(/PLAN_PRICES_DISPLAY/);
    expect(parseEnv({ PLAN_PRICES_DISPLAY: 'team=99 EUR/month' }).PLAN_PRICES_DISPLAY).toBe('team=99 EUR/month');
  });

  it('a Stripe price: its recurring amount, none for a price without a fixed amount or a period', () => {
    const recurring = { interval: 'month', interval_count: 3 };
    expect(priceOfStripe({ unit_amount: 9900, currency: 'eur', recurring })).toEqual({
      unit_amount: 9900,
      currency: 'EUR',
      interval: 'month',
      interval_count: 3,
    });
    expect(priceOfStripe({ unit_amount: null, currency: 'eur', recurring })).toBeNull();
    expect(priceOfStripe({ unit_amount: 9900, currency: 'eur', recurring: null })).toBeNull();
  });
});
