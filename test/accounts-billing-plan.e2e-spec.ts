import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, login, register } from './helpers/accounts.js';
import { startApp, type TestApp } from './helpers/app.js';

describe('managed deployment: the organization shows the plan billing holds it to', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ env: { DEPLOYMENT_MODE: 'managed' } });
  });
  afterAll(() => t.close());

  it('starts on Free and follows an operator plan change in the same answer as /v1/billing/plan', async () => {
    const owner = await register(t, { keepPlan: true });
    const tokens = await login(t, owner.email);
    const before = await t.http().get('/v1/account/organization').set(bearer(tokens)).expect(200);
    expect(before.body.plan).toBe('free');
    await t
      .http()
      .patch(`/admin/tenants/${owner.tenantId}`)
      .set('Authorization', `Bearer ${t.adminToken()}`)
      .send({ plan: 'team' })
      .expect(200);
    const org = await t.http().get('/v1/account/organization').set(bearer(tokens)).expect(200);
    const plan = await t.http().get('/v1/billing/plan').set(bearer(tokens)).expect(200);
    expect(org.body.plan).toBe('team');
    expect(JSON.stringify(plan.body)).toContain('team');
  });

  it('lists every plan with its limits, smallest first, matching what a tenant on it is held to', async () => {
    const owner = await register(t, { keepPlan: true });
    const tokens = await login(t, owner.email);
    const res = await t.http().get('/v1/billing/plans').set(bearer(tokens)).expect(200);
    const plans = res.body.data as {
      id: string;
      rpm: number | null;
      limits: { documents: number | null };
      self_service: boolean;
      custom: boolean;
    }[];
    expect(plans.map((p) => p.id)).toEqual(['free', 'developer', 'team', 'business', 'enterprise']);
    expect(plans.filter((p) => p.self_service).map((p) => p.id)).toEqual(['developer', 'team', 'business']);
    expect(plans.find((p) => p.id === 'enterprise')).toMatchObject({ custom: true, rpm: null });
    const current = await t.http().get('/v1/billing/plan').set(bearer(tokens)).expect(200);
    const free = plans.find((p) => p.id === 'free')!;
    expect(free.rpm).toBe(current.body.rpm);
    expect(free.limits).toEqual(current.body.limits);
    // Larger plans allow more.
    const documents = plans.slice(0, 4).map((p) => p.limits.documents ?? Infinity);
    expect([...documents].sort((a, b) => a - b)).toEqual(documents);
    await t.http().get('/v1/billing/plans').expect(401);
  });
});
