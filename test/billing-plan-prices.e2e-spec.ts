import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { bearer, login, register } from './helpers/accounts.js';

describe('GET /v1/billing/plans without Stripe: the prices of PLAN_PRICES_DISPLAY', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({
      env: { DEPLOYMENT_MODE: 'managed', PLAN_PRICES_DISPLAY: 'developer=19 EUR/month,team=99 EUR/month' },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('each paid plan with its configured price; Free, Enterprise and a plan left out have none', async () => {
    const account = await register(t, { keepPlan: true });
    const tokens = await login(t, account.email);
    const res = await t.http().get('/v1/billing/plans').set(bearer(tokens)).expect(200);
    const prices = Object.fromEntries((res.body.data as { id: string; price: unknown }[]).map((p) => [p.id, p.price]));
    expect(prices).toEqual({
      free: null,
      developer: { unit_amount: 1900, currency: 'EUR', interval: 'month', interval_count: 1 },
      team: { unit_amount: 9900, currency: 'EUR', interval: 'month', interval_count: 1 },
      business: null,
      enterprise: null,
    });
  });
});
