import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageFlusher } from '../src/billing/usage-flusher.js';
import { calendarMonth } from '../src/billing/plans.js';
import { startApp, type TestApp } from './helpers/app.js';
import {
  countRows,
  forgetRedisState,
  patchTenant,
  redisKeys,
  storedFiles,
  usageOf,
  userToken,
} from './helpers/billing.js';
import { MovableClock } from './helpers/clock.js';
import { upload } from './helpers/documents.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';

const MB = 1024 * 1024;

async function statusOf(t: TestApp, id: string): Promise<string | undefined> {
  const rows = (await t.ds.query(`SELECT status FROM documents WHERE id = $1`, [id])) as { status: string }[];
  return rows[0]?.status;
}

async function storedBytes(t: TestApp, tenantId: string): Promise<number> {
  const rows = (await t.ds.query(
    `SELECT COALESCE(SUM(file_size_bytes), 0)::bigint AS n FROM documents WHERE tenant_id = $1`,
    [tenantId],
  )) as { n: string }[];
  return Number(rows[0].n);
}

describe('usage metering (M3): Redis counters shared by two instances, flushed to PostgreSQL', () => {
  let a: TestApp;
  let b: TestApp;
  let tenant: TenantFixture;

  beforeAll(async () => {
    a = await startApp({ env: { DEPLOYMENT_MODE: 'managed', USAGE_FLUSH_INTERVAL_MS: '3600000' } });
    b = await startApp({ env: { DEPLOYMENT_MODE: 'managed', USAGE_FLUSH_INTERVAL_MS: '3600000' }, shareWith: a });
    tenant = await createTenant(a);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('a managed tenant starts on Free: its limits, rpm and calendar-month period', async () => {
    const plan = await a.http().get('/v1/billing/plan').set('X-API-Key', tenant.apiKey).expect(200);
    const month = calendarMonth(new Date());
    expect(plan.body).toEqual({
      plan: 'free',
      name: 'Free',
      rpm: 20,
      limits: { documents: 100, api_calls: 10_000, storage_bytes: 100 * MB },
      subscription_status: 'none',
      current_period_end: month.end.toISOString(),
      cancel_at_period_end: false,
    });
    const res = await b.http().get('/tenant').set('X-API-Key', tenant.apiKey).expect(200);
    expect(res.headers['x-ratelimit-limit']).toBe('20');
  });

  it('usage after N uploads, M deletes, K other calls and one signing equals the expected integers, on both instances and after a flush', async () => {
    const before = await usageOf(a, tenant.apiKey);
    const callsBefore = before.api_calls as number; // the GET /tenant of the test above
    const N = 4;
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      const { archive } = await buildSdf();
      const res = await upload(i % 2 ? b : a, tenant.apiKey, archive).expect(201);
      ids.push(res.body.id as string);
    }
    // Wait for validation through the database: polling over HTTP would itself be counted.
    await waitUntil(async () => (await statusOf(a, ids[0])) === 'valid', 'document valid', 30_000);
    await b.http().post(`/sign/${ids[0]}`).set('X-API-Key', tenant.apiKey).expect(202);
    await waitUntil(async () => (await statusOf(a, ids[0])) === 'signed', 'document signed', 30_000);
    const M = 2;
    await a.http().delete(`/delete/${ids[1]}`).set('X-API-Key', tenant.apiKey).expect(204);
    await b.http().delete(`/delete/${ids[2]}`).set('X-API-Key', tenant.apiKey).expect(204);
    const K = 3;
    await a.http().get('/list').set('X-API-Key', tenant.apiKey).expect(200);
    await b
      .http()
      .get('/tenant')
      .set('Authorization', `Bearer ${b.tenantToken(tenant.id)}`)
      .expect(200);
    await a.http().get(`/sdf/${ids[3]}`).set('X-API-Key', tenant.apiKey).expect(200);

    // Bytes stored now: exactly the two remaining files, the signed one at its signed size.
    const files = storedFiles(a, tenant.id);
    expect(files).toHaveLength(2);
    const onDisk = files.reduce((sum, f) => sum + f.size, 0);
    expect(await storedBytes(a, tenant.id)).toBe(onDisk);

    const month = calendarMonth(new Date());
    const expected = {
      period: { start: month.start.toISOString(), end: month.end.toISOString() },
      documents_uploaded: N,
      documents_limit: 100,
      api_calls: callsBefore + N + 1 + M + K,
      api_calls_limit: 10_000,
      storage_bytes: onDisk,
      storage_limit_bytes: 100 * MB,
    };
    expect(await usageOf(a, tenant.apiKey)).toEqual(expected);
    expect(await usageOf(b, tenant.apiKey)).toEqual(expected);

    await b.app.get(UsageFlusher).flush();
    const rows = (await a.ds.query(
      `SELECT period_start, period_end, documents_uploaded, api_calls, storage_bytes, closed_at
         FROM usage_periods WHERE tenant_id = $1`,
      [tenant.id],
    )) as Record<string, unknown>[];
    expect(rows).toEqual([
      {
        period_start: month.start,
        period_end: month.end,
        documents_uploaded: String(N),
        api_calls: String(expected.api_calls),
        storage_bytes: String(onDisk),
        closed_at: null,
      },
    ]);

    // Redis restarted: the counters come back from the flushed record and the documents table.
    await forgetRedisState(a, tenant.id);
    expect(await usageOf(b, tenant.apiKey)).toEqual(expected);
    expect(await usageOf(a, tenant.apiKey)).toEqual(expected);
  });

  it('checkout and portal are 503 BILLING_NOT_CONFIGURED without Stripe settings; plans and usage still work', async () => {
    const owner = `Bearer ${userToken(a, tenant.id, 'owner')}`;
    for (const path of ['/v1/billing/checkout', '/v1/billing/portal']) {
      const res = await a.http().post(path).set('Authorization', owner).send({ plan: 'team' });
      expect(res.status, path).toBe(503);
      expect(res.body.error.code).toBe('BILLING_NOT_CONFIGURED');
    }
    const hook = await a.http().post('/v1/billing/webhook').set('Stripe-Signature', 't=1,v1=00').send({});
    expect(hook.status).toBe(503);
    await a.http().get('/v1/billing/usage').set('Authorization', owner).expect(200);
  });
});

describe('quotas (M3): atomic upload reservation, API calls, storage, and a new period', () => {
  let a: TestApp;
  let b: TestApp;
  const clock = new MovableClock();
  // 32 uploads of one tenant at once: the quota is what refuses them here, not the uploads-in-flight bound.
  const managed = {
    DEPLOYMENT_MODE: 'managed',
    USAGE_FLUSH_INTERVAL_MS: '3600000',
    UPLOADS_IN_FLIGHT_PER_TENANT: '64',
  };

  beforeAll(async () => {
    a = await startApp({ env: managed, clock });
    b = await startApp({ env: managed, clock, shareWith: a });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  async function enterprise(t: TenantFixture, limits: Record<string, number>) {
    const res = await patchTenant(a, t.id, { plan: 'enterprise', limits: { rpm: 100_000, ...limits } });
    expect(res.status).toBe(200);
  }

  const count = (t: TenantFixture, sql: string) => countRows(a, sql, [t.id]);
  const rowsOf = (t: TenantFixture) => count(t, `SELECT count(*) AS n FROM documents WHERE tenant_id = $1`);
  /** Limits: one audit entry for the first refusal of each quota in a period. */
  const refusalsAudited = async (t: TenantFixture) =>
    (
      (await a.ds.query(
        `SELECT metadata->>'quota' AS quota FROM audit_log WHERE tenant_id = $1 AND action = 'quota.exceeded'`,
        [t.id],
      )) as { quota: string }[]
    ).map((r) => r.quota);
  const uploadedEvents = (t: TenantFixture) =>
    count(t, `SELECT count(*) AS n FROM outbox_events WHERE tenant_id = $1 AND event = 'document.uploaded'`);

  it('32 concurrent uploads with 10 documents left: exactly 10 stored, 22 refused with QUOTA_EXCEEDED', async () => {
    const tenant = await createTenant(a);
    await enterprise(tenant, { documents: 12 });
    for (let i = 0; i < 2; i++) await upload(a, tenant.apiKey, (await buildSdf()).archive).expect(201);
    const archives = await Promise.all(Array.from({ length: 32 }, async () => (await buildSdf()).archive));
    const results = await Promise.all(archives.map((archive, i) => upload(i % 2 ? b : a, tenant.apiKey, archive)));
    const accepted = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 429);
    expect(accepted).toHaveLength(10);
    expect(refused).toHaveLength(22);
    for (const r of refused) {
      expect(r.body.error.code).toBe('QUOTA_EXCEEDED');
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(await rowsOf(tenant)).toBe(12);
    expect(storedFiles(a, tenant.id)).toHaveLength(12);
    expect(await uploadedEvents(tenant)).toBe(12);
    expect(await refusalsAudited(tenant)).toEqual(['documents']);
    const usage = await usageOf(b, tenant.apiKey);
    expect(usage).toMatchObject({ documents_uploaded: 12, documents_limit: 12 });
    expect(usage.storage_bytes).toBe(storedFiles(a, tenant.id).reduce((s, f) => s + f.size, 0));
  });

  it('a retry of the upload that took the last document slot answers its first record, not 429; usage unchanged', async () => {
    const tenant = await createTenant(a);
    await enterprise(tenant, { documents: 2 });
    await upload(a, tenant.apiKey, (await buildSdf()).archive).expect(201);
    const last = (await buildSdf()).archive;
    const first = await upload(a, tenant.apiKey, last, { 'Idempotency-Key': 'erp-last-1' }).expect(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const before = await usageOf(a, tenant.apiKey);
    expect(before).toMatchObject({ documents_uploaded: 2, documents_limit: 2 });

    // The quota is full: a new upload is refused, the retry (its answer lost) is not, on either instance.
    const fresh = await upload(b, tenant.apiKey, (await buildSdf()).archive);
    expect(fresh.status).toBe(429);
    expect(fresh.body.error.code).toBe('QUOTA_EXCEEDED');
    for (const t of [a, b]) {
      const retry = await upload(t, tenant.apiKey, last, { 'Idempotency-Key': 'erp-last-1' });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body.id).toBe(first.body.id);
    }
    expect(await rowsOf(tenant)).toBe(2);
    expect(storedFiles(a, tenant.id)).toHaveLength(2);
    expect(await uploadedEvents(tenant)).toBe(2);
    expect(await usageOf(b, tenant.apiKey)).toMatchObject({
      documents_uploaded: 2,
      storage_bytes: before.storage_bytes,
    });
  });

  it('the storage quota refuses an upload that would pass it, storing nothing; a delete frees the bytes', async () => {
    const tenant = await createTenant(a);
    const first = (await buildSdf()).archive;
    const second = (await buildSdf({ paddingBytes: 4096 })).archive;
    await enterprise(tenant, { storage_bytes: first.length + second.length - 1 });
    const kept = await upload(a, tenant.apiKey, first).expect(201);
    const refused = await upload(b, tenant.apiKey, second);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('QUOTA_EXCEEDED');
    expect(refused.body.error.details[0].path).toBe('/quota/storage');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await rowsOf(tenant)).toBe(1);
    expect(storedFiles(a, tenant.id)).toHaveLength(1);
    expect(await uploadedEvents(tenant)).toBe(1);
    expect(await refusalsAudited(tenant)).toEqual(['storage']);
    expect(await usageOf(a, tenant.apiKey)).toMatchObject({ documents_uploaded: 1, storage_bytes: first.length });

    await b.http().delete(`/delete/${kept.body.id}`).set('X-API-Key', tenant.apiKey).expect(204);
    expect(await usageOf(a, tenant.apiKey)).toMatchObject({ storage_bytes: 0 });
    await upload(a, tenant.apiKey, second).expect(201);
    expect(await usageOf(b, tenant.apiKey)).toMatchObject({ documents_uploaded: 2, storage_bytes: second.length });
  });

  it('the API-call quota refuses with Retry-After to the period end; a new period resets it and closes the old record', async () => {
    const tenant = await createTenant(a);
    await enterprise(tenant, { api_calls: 5 });
    const start = new Date();
    clock.travelTo(start);
    const period = calendarMonth(start);
    for (let i = 0; i < 5; i++) await (i % 2 ? b : a).http().get('/tenant').set('X-API-Key', tenant.apiKey).expect(200);
    const refused = await b.http().get('/tenant').set('X-API-Key', tenant.apiKey);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('QUOTA_EXCEEDED');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil((period.end.getTime() - start.getTime()) / 1000) + 1);
    // An upload is an API call too: refused before anything is stored.
    const up = await upload(a, tenant.apiKey, (await buildSdf()).archive);
    expect(up.status).toBe(429);
    expect(await rowsOf(tenant)).toBe(0);
    expect(await refusalsAudited(tenant)).toEqual(['api_calls']);
    // Reading usage never spends it.
    expect(await usageOf(a, tenant.apiKey)).toMatchObject({ api_calls: 5, api_calls_limit: 5, documents_uploaded: 0 });

    // The next month: both instances count into a fresh period.
    clock.travelTo(new Date(period.end.getTime() + 3600_000));
    await a.http().get('/tenant').set('X-API-Key', tenant.apiKey).expect(200);
    await b.http().get('/tenant').set('X-API-Key', tenant.apiKey).expect(200);
    const next = calendarMonth(clock.now());
    expect(await usageOf(b, tenant.apiKey)).toMatchObject({
      period: { start: next.start.toISOString(), end: next.end.toISOString() },
      api_calls: 2,
    });
    await a.app.get(UsageFlusher).flush();
    const rows = (await a.ds.query(
      `SELECT period_start, api_calls, closed_at IS NOT NULL AS closed FROM usage_periods
        WHERE tenant_id = $1 ORDER BY period_start`,
      [tenant.id],
    )) as { period_start: Date; api_calls: string; closed: boolean }[];
    expect(rows).toEqual([
      { period_start: period.start, api_calls: '5', closed: true },
      { period_start: next.start, api_calls: '2', closed: false },
    ]);
    clock.travelTo(new Date());
  });

  it('PATCH /admin/tenants/:id validates plan and limits; limits belong to Enterprise only', async () => {
    const tenant = await createTenant(a);
    expect((await patchTenant(a, tenant.id, { plan: 'gold' })).status).toBe(400);
    expect((await patchTenant(a, tenant.id, { plan: 'team', limits: { documents: 5 } })).status).toBe(400);
    expect((await patchTenant(a, tenant.id, { plan: 'enterprise', limits: { documents: 0 } })).status).toBe(400);
    await patchTenant(a, tenant.id, { plan: 'team' }).then((r) => expect(r.status).toBe(200));
    const res = await b.http().get('/tenant').set('X-API-Key', tenant.apiKey).expect(200);
    expect(res.headers['x-ratelimit-limit']).toBe('300');
    const audit = (await a.ds.query(
      `SELECT actor, metadata FROM audit_log WHERE tenant_id = $1 AND action = 'billing.plan_change'`,
      [tenant.id],
    )) as { actor: string; metadata: Record<string, unknown> }[];
    expect(audit).toEqual([
      {
        actor: 'admin:test-operator',
        metadata: expect.objectContaining({ from: 'free', to: 'team', source: 'admin' }),
      },
    ]);
  });
});

describe('self-hosted: no plans, no quotas, no /v1/billing', () => {
  let t: TestApp;
  let tenant: TenantFixture;

  beforeAll(async () => {
    t = await startApp();
    tenant = await createTenant(t, { rate_limit_rpm: 1000 });
  });
  afterAll(() => t.close());

  it('answers 404 on /v1/billing/* and leaves them out of /openapi.json', async () => {
    for (const [method, path] of [
      ['get', '/v1/billing/plan'],
      ['get', '/v1/billing/usage'],
      ['post', '/v1/billing/checkout'],
      ['post', '/v1/billing/portal'],
      ['post', '/v1/billing/webhook'],
    ] as const) {
      const res = await t.http()[method](path).set('X-API-Key', tenant.apiKey);
      expect(res.status, path).toBe(404);
    }
    const doc = await t.http().get('/openapi.json').expect(200);
    expect(Object.keys(doc.body.paths as object).filter((p) => p.startsWith('/v1'))).toEqual([]);
  });

  it('meters nothing and refuses plan settings', async () => {
    for (let i = 0; i < 3; i++) await upload(t, tenant.apiKey, (await buildSdf()).archive).expect(201);
    expect(await redisKeys(t, 'use:*')).toEqual([]);
    expect(await redisKeys(t, 'bill:*')).toEqual([]);
    expect(await countRows(t, `SELECT count(*) AS n FROM tenant_billing`, [])).toBe(0);
    const res = await patchTenant(t, tenant.id, { plan: 'free' });
    expect(res.status).toBe(400);
    const limited = await t.http().get('/tenant').set('X-API-Key', tenant.apiKey).expect(200);
    expect(limited.headers['x-ratelimit-limit']).toBe('1000');
  });
});
