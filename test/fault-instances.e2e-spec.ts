import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { ServiceCluster, type ServiceProcess } from './helpers/service-processes.js';
import { waitUntil } from './helpers/wait.js';

describe('two API and two worker processes on one database and Redis', () => {
  let cluster: ServiceCluster;
  let apis: ServiceProcess[];
  let workers: ServiceProcess[];
  let db: pg.Client;

  beforeAll(async () => {
    // A window longer than the test, so the shared count cannot start over midway.
    cluster = await ServiceCluster.create({ env: { RATE_LIMIT_WINDOW_SECONDS: '3600' } });
    apis = await Promise.all([cluster.start('api'), cluster.start('api')]);
    workers = await Promise.all([cluster.start('worker'), cluster.start('worker')]);
    db = new pg.Client({ connectionString: cluster.postgres.url });
    await db.connect();
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await cluster?.remove();
  });

  it("a tenant's rate limit holds across both APIs together", async () => {
    const limited = await cluster.createTenant(apis[0]!, 20);
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++)
      statuses.push((await apis[i % 2]!.http().get('/list').set('X-API-Key', limited.apiKey)).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    // Both processes refused: each saw the count the other one raised.
    expect(statuses.slice(20).filter((s, i) => s === 429 && i % 2 === 0).length).toBeGreaterThan(0);
    expect(statuses.slice(20).filter((s, i) => s === 429 && i % 2 === 1).length).toBeGreaterThan(0);
  });

  it('mixed load through both APIs with a worker killed midway: every document processed once, none lost', async () => {
    const tenant = await cluster.createTenant(apis[0]!);
    const key = { 'X-API-Key': tenant.apiKey };
    const archives = await Promise.all(Array.from({ length: 6 }, async () => (await buildSdf()).archive));
    const accepted: string[] = [];
    let sent = 0;
    const client = async (n: number) => {
      while (sent < 80) {
        const i = sent++;
        const api = apis[(i + n) % 2]!;
        const res = await api
          .http()
          .post('/upload')
          .set(key)
          .attach('file', archives[i % archives.length]!, 'f.sdf');
        expect(res.status).toBe(201);
        accepted.push(res.body.id as string);
        expect((await api.http().get('/list').set(key)).status).toBe(200);
      }
    };
    const load = Promise.all([0, 1, 2, 3].map(client));
    await waitUntil(() => accepted.length >= 25, '25 uploads', 60_000);
    await workers[0]!.kill();
    await load;

    await waitUntil(
      async () =>
        (await db.query(`SELECT 1 FROM documents WHERE tenant_id = $1 AND status = 'pending'`, [tenant.id]))
          .rowCount === 0,
      'every document final',
      90_000,
    );
    const { rows } = await db.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM documents WHERE tenant_id = $1 GROUP BY status`,
      [tenant.id],
    );
    expect(rows).toEqual([{ status: 'valid', n: 80 }]);
    // Processed once: one validation result (its event) per document, though two workers and a takeover ran.
    const events = await db.query<{ id: string; n: number }>(
      `SELECT payload->'data'->>'id' AS id, count(*)::int AS n FROM outbox_events
        WHERE tenant_id = $1 AND event = 'document.validated' GROUP BY 1`,
      [tenant.id],
    );
    expect(events.rows).toHaveLength(80);
    expect(events.rows.filter((r) => r.n !== 1)).toEqual([]);
    expect(new Set(events.rows.map((r) => r.id))).toEqual(new Set(accepted));
    // Both APIs answered, and the surviving worker did work.
    for (const api of apis)
      expect(api.logs.filter((l) => l.msg === 'request' && l.method === 'POST').length).toBeGreaterThan(10);
    expect(workers[1]!.logs.some((l) => l.msg === 'validated')).toBe(true);
  }, 180_000);
});
