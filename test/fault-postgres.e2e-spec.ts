import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { ServiceCluster, type ServiceProcess } from './helpers/service-processes.js';
import { waitUntil } from './helpers/wait.js';

interface Answer {
  status: number;
  code?: string;
  retryAfter?: string;
  requestId?: string;
}

describe('PostgreSQL stopped for 10 s under load (API and worker as separate processes)', () => {
  let cluster: ServiceCluster;
  let api: ServiceProcess;
  let tenant: { id: string; apiKey: string };
  let archive: Buffer;

  beforeAll(async () => {
    cluster = await ServiceCluster.create();
    [api] = await Promise.all([cluster.start('api'), cluster.start('worker')]);
    tenant = await cluster.createTenant(api);
    archive = (await buildSdf()).archive;
  }, 120_000);
  afterAll(async () => {
    await cluster?.remove();
  });

  it('answers 503 with Retry-After in the error shape, names the database in /health/ready, logs at most a line per failed request, and recovers by itself', async () => {
    const answers: Answer[] = [];
    let stop = false;
    const client = async (i: number) => {
      while (!stop) {
        const req =
          i % 2 === 0
            ? api.http().get('/list').set('X-API-Key', tenant.apiKey)
            : api.http().post('/upload').set('X-API-Key', tenant.apiKey).attach('file', archive, 'f.sdf');
        const res = await req;
        answers.push({
          status: res.status,
          code: (res.body as { error?: { code?: string } }).error?.code,
          retryAfter: res.headers['retry-after'],
          requestId: res.headers['x-request-id'],
        });
      }
    };
    const load = Promise.all([0, 1, 2, 3].map(client));
    await waitUntil(() => answers.length >= 20, '20 answers before the outage', 30_000);
    const before = answers.length;
    await cluster.postgres.stop();
    await new Promise((r) => setTimeout(r, 2_000));
    const ready = await api.http().get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'unavailable', checks: { database: 'unavailable', redis: 'ok' } });
    await new Promise((r) => setTimeout(r, 8_000));
    const during = answers.length;
    await cluster.postgres.start();
    // Recovery without a restart: requests succeed again and readiness says so.
    await waitUntil(async () => (await api.http().get('/health/ready')).status === 200, 'ready again', 30_000);
    const recovered = answers.length;
    await waitUntil(() => answers.length >= recovered + 20, '20 answers after the return', 30_000);
    stop = true;
    await load;

    const outage = answers.slice(before, during);
    const refused = outage.filter((a) => a.status === 503);
    expect(refused.length).toBeGreaterThan(4);
    for (const a of answers) expect([200, 201, 503]).toContain(a.status);
    for (const a of refused) {
      expect(a.code).toBe('SERVICE_UNAVAILABLE');
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
    }
    expect(answers.slice(-20).every((a) => a.status === 200 || a.status === 201)).toBe(true);

    // At most one log line per failed request beside its access-log line, all of them JSON, no stack.
    expect(api.otherLines).toEqual([]);
    const notAccess = api.logs.filter((l) => l.msg !== 'request' && (l.level === 'warn' || l.level === 'error'));
    expect(notAccess.length).toBeLessThanOrEqual(refused.length);
    expect(notAccess.filter((l) => JSON.stringify(l).includes('    at '))).toEqual([]);
    expect(api.logs.filter((l) => l.level === 'error')).toEqual([]);
  }, 120_000);
});
