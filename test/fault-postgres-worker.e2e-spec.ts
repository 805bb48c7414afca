import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { ServiceCluster, type ServiceProcess } from './helpers/service-processes.js';
import { waitUntil } from './helpers/wait.js';

const OUTAGE_MS = 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PostgreSQL stopped for a minute under an idle worker (API and worker as separate processes)', () => {
  let cluster: ServiceCluster;
  let api: ServiceProcess;
  let worker: ServiceProcess;
  let tenant: { id: string; apiKey: string };

  beforeAll(async () => {
    // Every periodic task of the worker runs every two seconds, so each meets the outage many times.
    cluster = await ServiceCluster.create({
      env: { PENDING_SWEEP_INTERVAL_MS: '2000', ERP_HEALTH_INTERVAL_MS: '2000', WEBHOOK_DISPATCH_INTERVAL_MS: '1000' },
    });
    [api, worker] = await Promise.all([cluster.start('api'), cluster.start('worker')]);
    tenant = await cluster.createTenant(api);
  }, 120_000);
  afterAll(async () => {
    await cluster?.remove();
  });

  it('logs the outage once when it starts, naming the database and the waiting tasks, and once when it ends, with its length', async () => {
    // The worker is busy with its loops before the outage: one document validated end to end.
    const archive = (await buildSdf()).archive;
    const key = { 'X-API-Key': tenant.apiKey };
    const first = await api.http().post('/upload').set(key).attach('file', archive, 'f.sdf').expect(201);
    const statusOf = async (id: string) =>
      ((await api.http().get(`/sdf/${id}`).set(key)).body as { status: string }).status;
    await waitUntil(async () => (await statusOf(first.body.id as string)) === 'valid', 'a document validated', 30_000);
    // The worker says so after its commit, and its output is read as it comes: the line is waited for, so
    // that it is not taken for a line said during the outage.
    await worker.waitForLog(
      (l) => l.msg === 'validated' && l.id === first.body.id,
      "the worker's line for the validated document",
      30_000,
    );

    const mark = worker.logs.length;
    await cluster.postgres.stop();
    const stopped = Date.now();
    await sleep(OUTAGE_MS);
    await cluster.postgres.start();
    const started = Date.now();
    const end = await worker.waitForLog(
      (l) => l.msg === 'background tasks resume: dependencies answer again',
      'the end of the outage in the worker log',
      30_000,
    );
    // Ten more seconds in which the tasks run again: nothing more is said about the outage.
    await sleep(10_000);

    const lines = worker.logs.slice(mark);
    console.log(
      `worker log during the ${OUTAGE_MS / 1000} s outage and 10 s after it:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`,
    );
    expect(worker.otherLines).toEqual([]);
    expect(lines.length, `the worker's lines: ${JSON.stringify(lines)}`).toBeLessThanOrEqual(2);
    const begin = lines.find(
      (l) => l.msg === 'background tasks wait: a dependency is unreachable; they retry quietly until it answers',
    );
    expect(begin).toMatchObject({ level: 'warn', unavailable: ['database'] });
    expect(begin!.affected).toEqual(expect.arrayContaining(['outbox dispatch']));
    expect(end).toMatchObject({ level: 'info', unavailable: ['database'] });
    // Its length: from the first failed round to the first probe that answered.
    expect(end.outage_ms as number).toBeGreaterThan(OUTAGE_MS - 5_000);
    expect(end.outage_ms as number).toBeLessThan(Date.now() - stopped);
    expect((end.affected as string[]).length).toBeGreaterThanOrEqual((begin!.affected as string[]).length);
    expect(Date.parse(end.time as string)).toBeGreaterThanOrEqual(started - 1_000);

    // The worker carries on by itself: a new upload is validated.
    const after = await api.http().post('/upload').set(key).attach('file', archive, 'f.sdf').expect(201);
    await waitUntil(
      async () => (await statusOf(after.body.id as string)) === 'valid',
      'a document validated after',
      30_000,
    );
  }, 180_000);
});
