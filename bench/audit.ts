/**
 * GET /v1/audit at 10k and at 1M entries in a tenant, in one run: two organizations in one database,
 * one with 10,000 entries and one with 1,000,000 (made by SQL: 20 of the service's actions, half of them
 * about a document; actors the organization's owner, one of its API keys and the service; 30 s apart, in
 * time order as an append-only log lies), then p50/p99 of the first page (50 entries) with no filter,
 * filtered by action and filtered by a one-day range. Requests alternate between the two organizations,
 * so load from anything else on the machine falls on both sizes alike. Each figure is taken twice: the
 * whole HTTP request (a signed-in owner's access token, managed mode, this process) and the service's
 * query alone (AuditQueryService.page, the same page).
 *
 *   npm run bench:audit        (BENCH_AUDIT_REQUESTS requests per figure and size, default 300)
 *
 * Needs the local PostgreSQL and Redis (DATABASE_URL / REDIS_URL); makes and drops its own database.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import type pg from 'pg';
import { AuditQueryService } from '../src/audit/audit-query.service.js';
import { adminHeaders, benchSetup, percentile, startInProcess } from './harness.js';

const REQUESTS = Number(process.env.BENCH_AUDIT_REQUESTS ?? 300);
const SIZES = [10_000, 1_000_000];
const PASSWORD = 'bench passphrase for the audit log';

interface Figure {
  p50: number;
  p99: number;
}

const fmt = (n: number) => n.toFixed(2).padStart(8);

async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/**
 * Adds `count` entries to the tenant, entry i written i * 30 s before `start`, in batches that lie in
 * the heap in time order (random timestamps would scatter a page's rows over the whole table, which an
 * append-only log never does).
 */
async function addRows(db: pg.Client, tenantId: string, start: Date, count: number): Promise<void> {
  // The names a page shows are read for it (a person, a key, the documents): the entries name real ones.
  const [{ id: userId }] = (await db.query(`SELECT id FROM users WHERE tenant_id = $1`, [tenantId])).rows as {
    id: string;
  }[];
  await db.query(
    `INSERT INTO api_keys (tenant_id, key_prefix, key_salt, key_hash, name) VALUES ($1, 'sdf_kBnc', 'x', 'x', 'Bench key')`,
    [tenantId],
  );
  // Each month the rows span gets its partition first, as the service makes them ahead of time; rows of
  // a month without one would land in the default partition, which a real log never fills.
  await db.query(
    `SELECT audit_log_ensure_partition(m::date)
       FROM generate_series(date_trunc('month', $1::timestamptz - $2::int * interval '30 seconds'), $1::timestamptz,
                            interval '1 month') AS m`,
    [start, count],
  );
  const batch = 100_000;
  for (let first = 0; first < count; first += batch) {
    const last = Math.min(count, first + batch) - 1;
    await db.query(
      `INSERT INTO audit_log (tenant_id, action, actor, resource_id, ip_address, metadata, created_at)
       SELECT $1, (ARRAY['upload', 'download', 'sign', 'verify', 'delete', 'sign.failed', 'connector.match',
                         'connector.push', 'connector.push_succeeded', 'connector.push_failed', 'login', 'logout',
                         'session.refresh', 'api_key.create', 'api_key.revoke', 'webhook.create', 'team.invite',
                         'profile.update', 'schema.create', 'quota.exceeded'])[i % 20 + 1],
              CASE WHEN i % 10 < 6 THEN 'user:' || $5 WHEN i % 10 < 9 THEN 'api_key:sdf_kBnc' ELSE 'system:sign-sdf' END,
              md5((i % 5000)::text)::uuid::text, '127.0.0.1',
              jsonb_build_object('n', i), $4::timestamptz - i * interval '30 seconds'
         FROM generate_series($2::int, $3::int) AS i`,
      [tenantId, first, last, start, userId],
    );
  }
}

/** `REQUESTS` measured calls of each function, alternating; 20 unmeasured rounds first (pools, caches). */
async function alternate(calls: (() => Promise<void>)[]): Promise<Figure[]> {
  const latencies: number[][] = calls.map(() => []);
  for (let i = 0; i < REQUESTS + 20; i++) {
    for (const [k, call] of calls.entries()) {
      const t0 = performance.now();
      await call();
      if (i >= 20) latencies[k]!.push(performance.now() - t0);
    }
  }
  return latencies.map((l) => {
    l.sort((a, b) => a - b);
    return { p50: percentile(l, 50), p99: percentile(l, 99) };
  });
}

async function httpPage(url: string, token: string, query: string): Promise<void> {
  const res = await fetch(`${url}/v1/audit${query}`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as { entries?: unknown[] };
  if (res.status !== 200 || body.entries?.length !== 50) {
    throw new Error(`${query}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  }
}

async function main(): Promise<void> {
  const setup = await benchSetup({ DEPLOYMENT_MODE: 'managed', RATE_LIMIT_DEFAULT_RPM: '1000000' });
  const { config, db } = setup;
  const { app, url } = await startInProcess(setup);
  try {
    const start = new Date(Date.now() - 86_400_000);
    const orgs: { tenantId: string; email: string; token: string }[] = [];
    for (const size of SIZES) {
      const email = `bench-${size}-${randomBytes(4).toString('hex')}@example.test`;
      await post(`${url}/v1/auth/register`, {
        email,
        password: PASSWORD,
        organization: `Bench ${size}`,
        slug: `bench-${size}-${randomBytes(4).toString('hex')}`,
      });
      // The answer names no id (it is the same for an address that has an account): the database does. The
      // mailed link is not followed here; the address is marked verified as following it would.
      const [{ tenant_id: tenantId }] = (
        await db.query(`UPDATE users SET email_verified = true WHERE lower(email) = lower($1) RETURNING tenant_id`, [
          email,
        ])
      ).rows as { tenant_id: string }[];
      // A new organization is on Free (20 requests a minute): the measured one gets Enterprise limits.
      const plan = await fetch(`${url}/admin/tenants/${tenantId}`, {
        method: 'PATCH',
        headers: adminHeaders(config),
        body: JSON.stringify({ plan: 'enterprise', limits: { rpm: 1_000_000 } }),
      });
      if (!plan.ok) throw new Error(`plan change: ${plan.status} ${await plan.text()}`);
      const t0 = performance.now();
      await addRows(db, tenantId, start, size);
      console.log(`${size} entries made in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      orgs.push({ tenantId, email, token: '' });
    }
    await db.query('VACUUM ANALYZE audit_log');
    // Access tokens live 15 minutes: log in once the rows are made.
    for (const org of orgs) {
      org.token = (await post(`${url}/v1/auth/login`, { email: org.email, password: PASSWORD })).access_token as string;
    }
    // One day inside the newest 10k entries: the same window, and as many rows, at both sizes.
    const from = new Date(start.getTime() - 2 * 86_400_000).toISOString();
    const to = new Date(start.getTime() - 86_400_000).toISOString();
    const service = app.get(AuditQueryService, { strict: false });
    const figures: { size: number; name: string; http: Figure; query: Figure }[] = [];
    for (const [name, query, dto] of [
      ['no filter', '', {}],
      ['by action', '?action=download', { action: 'download' }],
      ['by time range (1 day)', `?from=${from}&to=${to}`, { from, to }],
    ] as const) {
      const http = await alternate(orgs.map((o) => () => httpPage(url, o.token, query)));
      const direct = await alternate(
        orgs.map((o) => async () => {
          if ((await service.page(o.tenantId, dto)).entries.length !== 50) throw new Error(`${name}: short page`);
        }),
      );
      SIZES.forEach((size, k) => figures.push({ size, name, http: http[k]!, query: direct[k]! }));
    }

    console.log(`\nGET /v1/audit, first page (50 entries), ${REQUESTS} requests per figure and size, ms`);
    console.log('(HTTP: the whole request; query: AuditQueryService.page alone, the same page)');
    console.log('figure                         rows HTTP p50 HTTP p99  query p50 query p99');
    for (const f of figures) {
      console.log(
        `${f.name.padEnd(26)} ${String(f.size).padStart(8)} ${fmt(f.http.p50)} ${fmt(f.http.p99)}  ` +
          `${fmt(f.query.p50)}  ${fmt(f.query.p99)}`,
      );
    }
    console.log('\nratio 1M / 10k:');
    const r = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
    for (const name of new Set(figures.map((f) => f.name))) {
      const [small, large] = SIZES.map((s) => figures.find((f) => f.size === s && f.name === name)!);
      console.log(
        `${name.padEnd(26)} HTTP p50 ${r(large!.http.p50, small!.http.p50)}  p99 ${r(large!.http.p99, small!.http.p99)}   ` +
          `query p50 ${r(large!.query.p50, small!.query.p50)}  p99 ${r(large!.query.p99, small!.query.p99)}`,
      );
    }
    console.log(
      `load average (1, 5, 15 min) at the end: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(', ')}`,
    );
  } finally {
    await app.close();
    await setup.cleanup();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
