import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectAcceptedSettledValid,
  expectAccessLogged,
  expectRedisOutageLoggedOnce,
  expectSuccessOr503,
  type Outcome,
  QUICK_PENDING_SWEEP,
  timed,
} from './helpers/outages.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { ServiceCluster, type ServiceProcess } from './helpers/service-processes.js';
import { waitUntil } from './helpers/wait.js';

describe('Redis crashes under 200 uploads (API and worker as separate processes)', () => {
  let cluster: ServiceCluster;
  let api: ServiceProcess;
  let worker: ServiceProcess;
  let tenant: { id: string; apiKey: string };
  let archives: Buffer[];

  beforeAll(async () => {
    cluster = await ServiceCluster.create({
      env: { ...QUICK_PENDING_SWEEP, AUTH_FAILURE_LIMIT: '5' },
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
          await timed('upload', () =>
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
      others.push(await timed('list', () => api.http().get('/list').set('X-API-Key', tenant.apiKey)));
    }
    expect((await api.http().get('/health/ready')).body.checks.redis).toBe('unavailable');
    // Back, empty, as after a crash of a Redis without persistence.
    await cluster.redis.start();
    await load;

    const all = [...uploads, ...others];
    expect(uploads).toHaveLength(200);
    expectSuccessOr503(all);
    const refused = all.filter((o) => o.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    await expectAccessLogged(api, all);

    // Every accepted document reaches its final state, with no operator action, and nothing else exists.
    const accepted = uploads.filter((o) => o.status === 201).map((o) => o.body.id!);
    expect(accepted.length).toBeGreaterThan(40);
    await expectAcceptedSettledValid(cluster, accepted);
    // No partial upload is left behind.
    expect(cluster.temporaryFiles()).toEqual([]);

    // The log: JSON only, the outage said once and its end once per process, no error line per request.
    expectRedisOutageLoggedOnce([api, worker]);
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
