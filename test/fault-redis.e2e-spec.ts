import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { ServiceCluster, type ServiceProcess } from './helpers/service-processes.js';
import { waitUntil } from './helpers/wait.js';

interface Outcome {
  status: number;
  body: { id?: string; error?: { code?: string } };
  retryAfter?: string;
  requestId?: string;
  ms: number;
}

async function timed(
  run: () => PromiseLike<{ status: number; body: unknown; headers: Record<string, string> }>,
): Promise<Outcome> {
  const started = Date.now();
  const res = await run();
  return {
    status: res.status,
    body: res.body as Outcome['body'],
    retryAfter: res.headers['retry-after'],
    requestId: res.headers['x-request-id'],
    ms: Date.now() - started,
  };
}

/** A generous bound: an answer within it came from the service, not from a wait for Redis to return. */
const FEW_SECONDS = 5_000;

describe('Redis crashes under 200 uploads (API and worker as separate processes)', () => {
  let cluster: ServiceCluster;
  let api: ServiceProcess;
  let worker: ServiceProcess;
  let tenant: { id: string; apiKey: string };
  let archives: Buffer[];

  beforeAll(async () => {
    cluster = await ServiceCluster.create({
      env: {
        // Documents whose job went with Redis's data get a fresh one soon after it is back.
        PENDING_SWEEP_INTERVAL_MS: '2000',
        PENDING_SWEEP_AGE_MS: '3000',
        AUTH_FAILURE_LIMIT: '5',
      },
    });
    [api, worker] = await Promise.all([cluster.start('api'), cluster.start('worker')]);
    tenant = await cluster.createTenant(api);
    archives = await Promise.all(Array.from({ length: 8 }, async () => (await buildSdf()).archive));
  }, 120_000);
  afterAll(async () => {
    await cluster?.remove();
  });

  it('answers 503 within seconds while Redis is away, never 500 nor a hang, logs it once, and settles every accepted document once Redis is back empty', async () => {
    const uploads: Outcome[] = [];
    let sent = 0;
    const client = async () => {
      while (sent < 200) {
        const archive = archives[sent++ % archives.length]!;
        uploads.push(
          await timed(() =>
            api.http().post('/upload').set('X-API-Key', tenant.apiKey).attach('file', archive, 'f.sdf'),
          ),
        );
      }
    };
    const load = Promise.all(Array.from({ length: 4 }, client));
    await waitUntil(() => sent >= 40, '40 uploads sent', 30_000);
    await cluster.redis.kill();
    // Other requests meanwhile, one after another, for 10 s.
    const others: Outcome[] = [];
    const started = Date.now();
    while (Date.now() - started < 10_000) {
      others.push(await timed(() => api.http().get('/list').set('X-API-Key', tenant.apiKey)));
    }
    expect((await api.http().get('/health/ready')).body.checks.redis).toBe('unavailable');
    // Back, empty, as after a crash of a Redis without persistence.
    await cluster.redis.start();
    await load;

    const all = [...uploads, ...others];
    expect(uploads).toHaveLength(200);
    for (const o of all) {
      expect([200, 201, 503]).toContain(o.status);
      expect(o.ms).toBeLessThan(FEW_SECONDS);
      if (o.status === 503) {
        expect(o.body.error?.code).toBe('SERVICE_UNAVAILABLE');
        expect(Number(o.retryAfter)).toBeGreaterThan(0);
      }
    }
    const refused = all.filter((o) => o.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    // Each answer, a refused one too, has its access-log line.
    const loggedIds = () => new Set(api.logs.filter((l) => l.msg === 'request').map((l) => l.request_id));
    await waitUntil(() => all.every((o) => loggedIds().has(o.requestId)), 'an access-log line per answer', 5_000).catch(
      () => undefined,
    );
    expect(all.filter((o) => !loggedIds().has(o.requestId))).toEqual([]);

    // Every accepted document reaches its final state, with no operator action, and nothing else exists.
    const accepted = uploads.filter((o) => o.status === 201).map((o) => o.body.id!);
    expect(accepted.length).toBeGreaterThan(40);
    const db = new pg.Client({ connectionString: cluster.postgres.url });
    await db.connect();
    try {
      await waitUntil(
        async () =>
          (await db.query<{ n: string }>(`SELECT count(*) AS n FROM documents WHERE status = 'pending'`)).rows[0]!.n ===
          '0',
        'no document pending',
        60_000,
      );
      const { rows } = await db.query<{ id: string; status: string }>(`SELECT id, status FROM documents`);
      expect(new Set(rows.map((r) => r.id))).toEqual(new Set(accepted));
      expect(rows.filter((r) => r.status !== 'valid')).toEqual([]);
    } finally {
      await db.end();
    }
    // No partial upload is left behind.
    expect(cluster.temporaryFiles()).toEqual([]);

    // The log: JSON only, the outage said once and its end once per process, no error line per request.
    for (const p of [api, worker]) {
      expect(p.otherLines).toEqual([]);
      expect(p.logs.filter((l) => String(l.msg).startsWith('Redis is unreachable'))).toHaveLength(1);
      expect(p.logs.filter((l) => l.msg === 'Redis answers again')).toHaveLength(1);
    }
    expect(api.logs.filter((l) => l.level === 'error')).toEqual([]);
    expect(api.logs.filter((l) => l.level === 'warn').length).toBeLessThan(10);
  }, 120_000);

  it('rate limits and the failed-authentication throttle work again once Redis is back', async () => {
    const limited = await cluster.createTenant(api, 3);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await api.http().get('/list').set('X-API-Key', limited.apiKey)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);

    const bad: number[] = [];
    for (let i = 0; i < 6; i++)
      bad.push(
        (
          await api
            .http()
            .get('/list')
            .set('X-API-Key', `sdf_k${'x'.repeat(43)}`)
        ).status,
      );
    expect(bad.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(bad[5]).toBe(429);
  });
});
