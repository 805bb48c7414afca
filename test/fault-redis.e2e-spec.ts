import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectAcceptedSettledValid,
  expectAccessLogged,
  expectRedisOutageLoggedOnce,
  expectSuccessOr503,
  FEW_SECONDS,
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

  it('answers 503 with Retry-After within seconds while Redis is frozen (SIGSTOP), logs the outage once at its start and once at its end, and serves again once it thaws', async () => {
    const key = { 'X-API-Key': tenant.apiKey };
    const archive = archives[0]!;
    await api.http().get('/list').set(key).expect(200);
    const mark = api.logs.length;
    cluster.redis.freeze();
    const frozen = Date.now();
    // Requests one after another for 12 s: reads and uploads, which both need Redis (rate limit, upload slot).
    const outcomes: Outcome[] = [];
    for (let i = 0; Date.now() - frozen < 12_000; i++) {
      outcomes.push(
        i % 2 === 0
          ? await timed('list', () => api.http().get('/list').set(key))
          : await timed('upload', () => api.http().post('/upload').set(key).attach('file', archive, 'f.sdf')),
      );
    }
    const ready = await api.http().get('/health/ready');
    cluster.redis.thaw();
    const thawed = Date.now();
    await waitUntil(async () => (await api.http().get('/list').set(key)).status === 200, 'served again', 15_000);
    console.log(
      `frozen Redis: ${outcomes.length} answers, the slowest in ${Math.max(...outcomes.map((o) => o.ms))} ms`,
    );

    expect(ready.status).toBe(503);
    expect(ready.body.checks.redis).toBe('unavailable');
    // Within the documented bound (a command is given up after 2.5 s), never held until Redis answers again.
    expectSuccessOr503(outcomes);
    expect(outcomes.filter((o) => o.ms >= FEW_SECONDS)).toEqual([]);
    expect(outcomes.filter((o) => o.status !== 503)).toEqual([]);
    expect(outcomes.length).toBeGreaterThanOrEqual(3);
    await expectAccessLogged(api, outcomes);

    // The log: the outage said when it starts and when it ends, once each, JSON only.
    await api.waitForLog((l) => l.msg === 'Redis answers again' && api.logs.indexOf(l) >= mark, 'the end line', 10_000);
    const lines = api.logs.slice(mark);
    expect(api.otherLines).toEqual([]);
    const begin = lines.filter((l) => String(l.msg).startsWith('Redis is unreachable'));
    expect(begin).toHaveLength(1);
    expect(begin[0]).toMatchObject({ level: 'warn', reason: 'Command timed out' });
    const end = lines.filter((l) => l.msg === 'Redis answers again');
    expect(end).toHaveLength(1);
    expect(end[0]!.outage_ms as number).toBeGreaterThan(8_000);
    expect(end[0]!.outage_ms as number).toBeLessThan(Date.now() - frozen);
    expect(Date.parse(end[0]!.time as string)).toBeGreaterThanOrEqual(thawed - 1_000);
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
  }, 60_000);

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
