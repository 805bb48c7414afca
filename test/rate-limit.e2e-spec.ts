import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

/**
 * Fixed windows are aligned on the Redis clock; a test that straddles a boundary would see the count
 * reset. Start each scenario well inside a window.
 */
async function awaitFreshWindow(t: TestApp, tenant: TenantFixture): Promise<void> {
  const res = await t.http().get('/tenant').set('X-API-Key', tenant.apiKey);
  const resetAt = Number(res.headers['x-ratelimit-reset']);
  const msLeft = resetAt * 1000 - Date.now();
  if (msLeft < 15_000) await new Promise((r) => setTimeout(r, msLeft + 500));
}

describe('per-tenant rate limit (S12)', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await startApp();
    b = await startApp({ shareWith: a });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('answers the sixth request of a window with 429 and Retry-After; another tenant is served', async () => {
    const limited = await createTenant(a, { rate_limit_rpm: 5 });
    const other = await createTenant(a, { rate_limit_rpm: 5 });
    await awaitFreshWindow(a, await createTenant(a));
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 6; i++) {
      last = await a.http().get('/tenant').set('X-API-Key', limited.apiKey);
      statuses.push(last.status);
      expect(last.headers['x-ratelimit-limit']).toBe('5');
      expect(Number(last.headers['x-ratelimit-remaining'])).toBe(Math.max(0, 4 - i));
      expect(Number(last.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(last!.body.error.code).toBe('RATE_LIMITED');
    const retryAfter = Number(last!.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    await a.http().get('/tenant').set('X-API-Key', other.apiKey).expect(200);
    // A JWT of the limited tenant counts against the same tenant budget.
    await a
      .http()
      .get('/tenant')
      .set('Authorization', `Bearer ${a.tenantToken(limited.id)}`)
      .expect(429);
    // Health and the OpenAPI document are never limited.
    await a.http().get('/health').expect(200);
    await a.http().get('/openapi.json').expect(200);
  });

  it('writes one audit entry per tenant per window however many requests are refused', async () => {
    const tenant = await createTenant(a, { rate_limit_rpm: 2 });
    await awaitFreshWindow(a, await createTenant(a));
    for (let i = 0; i < 6; i++) await a.http().get('/tenant').set('X-API-Key', tenant.apiKey);
    const rows = await a.ds.query(
      `SELECT actor, metadata FROM audit_log WHERE tenant_id = $1 AND action = 'rate_limit.exceeded'`,
      [tenant.id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].actor).toBe(`api_key:${tenant.keyPrefix}`);
    expect(rows[0].metadata).toMatchObject({ limit: 2 });
  });

  it('holds when requests alternate between two instances sharing Redis', async () => {
    const tenant = await createTenant(a, { rate_limit_rpm: 5 });
    await awaitFreshWindow(a, await createTenant(a));
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const instance = i % 2 === 0 ? a : b;
      statuses.push((await instance.http().get('/tenant').set('X-API-Key', tenant.apiKey)).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
  });

  it('applies a changed rate_limit_rpm to the next request', async () => {
    const tenant = await createTenant(a, { rate_limit_rpm: 1 });
    await awaitFreshWindow(a, await createTenant(a));
    await a.http().get('/tenant').set('X-API-Key', tenant.apiKey).expect(200);
    await a.http().get('/tenant').set('X-API-Key', tenant.apiKey).expect(429);
    await a
      .http()
      .patch(`/admin/tenants/${tenant.id}`)
      .set('Authorization', `Bearer ${a.adminToken()}`)
      .send({ rate_limit_rpm: 100 })
      .expect(200);
    const res = await a.http().get('/tenant').set('X-API-Key', tenant.apiKey).expect(200);
    expect(res.headers['x-ratelimit-limit']).toBe('100');
  });
});
