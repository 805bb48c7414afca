import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { getQueueToken } from '@nestjs/bullmq';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PendingSweeper } from '../src/documents/jobs/pending-sweeper.js';
import { isInfrastructureError } from '../src/common/infrastructure-errors.js';
import { OutageGate } from '../src/queue/outages.js';
import { QueueName } from '../src/queue/queues.js';
import { startApp, type TestApp } from './helpers/app.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { OwnPostgres } from './helpers/own-postgres.js';
import { freePort } from './helpers/processes.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const parse = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('a PostgreSQL outage while the worker has a backlog (S9)', () => {
  let db: OwnPostgres;
  let api: TestApp;
  let worker: TestApp;
  let tenant: TenantFixture;
  const workerLog: string[] = [];

  beforeAll(async () => {
    db = await OwnPostgres.create();
    api = await startApp({ env: { PROCESS_ROLE: 'api', DATABASE_URL: db.url } });
    tenant = await createTenant(api, { rate_limit_rpm: 10_000 });
  }, 120_000);
  afterAll(async () => {
    await worker?.close().catch(() => undefined);
    await api?.close().catch(() => undefined);
    await db?.remove();
  });

  it('30 queued validations and 5 queued signings all finish once the database is back, no attempt used, no operator', async () => {
    const validate = api.app.get<Queue>(getQueueToken(QueueName.ValidateSdf));
    const sign = api.app.get<Queue>(getQueueToken(QueueName.SignSdf));

    // Five documents valid before the outage, to be signed during it.
    const toSign: string[] = [];
    for (let i = 0; i < 5; i++)
      toSign.push((await upload(api, tenant.apiKey, (await buildSdf()).archive).expect(201)).body.id);
    worker = await startApp({
      shareWith: api,
      env: { PROCESS_ROLE: 'worker', DATABASE_URL: db.url, JOB_OUTAGE_MAX_DELAY_MS: '2000' },
      logSink: (line) => workerLog.push(line),
    });
    for (const id of toSign) expect((await waitForFinal(api, tenant.apiKey, id)).body.status).toBe('valid');

    // The backlog: nothing is taken while both queues are paused.
    await validate.pause();
    await sign.pause();
    const ids: string[] = [];
    for (let i = 0; i < 30; i++)
      ids.push((await upload(api, tenant.apiKey, (await buildSdf()).archive).expect(201)).body.id);
    for (const id of toSign) await api.http().post(`/sign/${id}`).set('X-API-Key', tenant.apiKey).expect(202);
    expect(await validate.getWaitingCount()).toBe(30);

    // The database goes away, the worker meets it with its whole backlog, and it comes back 10 s later.
    await db.stop();
    await validate.resume();
    await sign.resume();
    // Requests meanwhile: 503 in the error shape with Retry-After, never 500; readiness names the database.
    const during = await api.http().get('/list').set('X-API-Key', tenant.apiKey);
    expect(during.status).toBe(503);
    expect(during.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(Number(during.headers['retry-after'])).toBeGreaterThan(0);
    const uploadDuring = await upload(api, tenant.apiKey, (await buildSdf()).archive);
    expect(uploadDuring.status).toBe(503);
    expect(uploadDuring.body.error.code).toBe('SERVICE_UNAVAILABLE');
    await new Promise((r) => setTimeout(r, 1500));
    const ready = await api.http().get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.checks.database).not.toBe('ok');
    await new Promise((r) => setTimeout(r, 8_000));
    expect(await validate.getFailedCount()).toBe(0);
    expect(await sign.getFailedCount()).toBe(0);
    await db.start();

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await until(
        'every document final',
        async () => {
          const { rows } = await client.query<{ pending: string }>(
            `SELECT count(*) FILTER (WHERE status = 'pending' OR (id = ANY($1) AND status <> 'signed')) AS pending
               FROM documents`,
            [toSign],
          );
          return rows[0]!.pending === '0';
        },
        60_000,
      );
      const { rows } = await client.query<{ status: string; n: string }>(
        `SELECT status, count(*) AS n FROM documents GROUP BY status ORDER BY status`,
      );
      expect(rows).toEqual([
        { status: 'signed', n: '5' },
        { status: 'valid', n: '30' },
      ]);
    } finally {
      await client.end();
    }
    // No job used its attempts on the outage: none failed, none is kept for an operator.
    expect(await validate.getFailedCount()).toBe(0);
    expect(await sign.getFailedCount()).toBe(0);
    for (const id of ids) expect((await validate.getJob(id))?.attemptsMade ?? 0).toBeLessThanOrEqual(1);

    // The log says it once per queue and outage, not once per job, and names no job as failed.
    const lines = parse(workerLog);
    const began = lines.filter((l) => String(l.msg).startsWith('a dependency is unreachable'));
    expect(began.map((l) => l.queue).sort()).toEqual([QueueName.SignSdf, QueueName.ValidateSdf]);
    expect(
      lines.some((l) => String(l.msg).startsWith('dependencies answer again') && l.queue === QueueName.ValidateSdf),
    ).toBe(true);
    expect(lines.filter((l) => String(l.msg).includes('failed for good'))).toEqual([]);
  }, 180_000);
});

describe('a validation that fails for good, and the sweeper that replaces its job', () => {
  let api: TestApp;
  let tenant: TenantFixture;
  const log: string[] = [];

  beforeAll(async () => {
    api = await startApp({
      // Sweeps are run by hand below; the interval only has to stay out of the way.
      env: { PENDING_SWEEP_INTERVAL_MS: '3600000', PENDING_SWEEP_AGE_MS: '1000' },
      logSink: (line) => log.push(line),
    });
    tenant = await createTenant(api, { rate_limit_rpm: 10_000 });
  });
  afterAll(async () => {
    await api.close();
  });

  it('a document whose stored file is gone shows why on its record and in the log, and is validated once the file is back', async () => {
    const validate = api.app.get<Queue>(getQueueToken(QueueName.ValidateSdf));
    await validate.pause();
    const { archive } = await buildSdf();
    const res = await upload(api, tenant.apiKey, archive).expect(201);
    const id = res.body.id as string;
    const [row] = (await api.ds.query(`SELECT storage_key FROM documents WHERE id = $1`, [id])) as {
      storage_key: string;
    }[];
    const path = join(api.config.env.STORAGE_LOCAL_DIR, row!.storage_key);
    rmSync(path);
    await validate.resume();

    // Three attempts (2 s and 4 s apart), then the reason on the record and one log line.
    let detail: Record<string, unknown> = {};
    await until(
      'the validation error on the record',
      async () => {
        detail = (await api.http().get(`/sdf/${id}`).set('X-API-Key', tenant.apiKey).expect(200)).body;
        return detail.validation_error !== null;
      },
      30_000,
    );
    expect(detail.status).toBe('pending');
    expect(detail.validation_error).toMatchObject({ code: 'VALIDATION_FAILED', attempts: 3 });
    const failed = parse(log).filter((l) => String(l.msg).startsWith('validation failed for good'));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ tenant_id: tenant.id, id, job_id: id, attempts: 3 });
    expect(await validate.getFailedCount()).toBe(1);

    // The file comes back (restored by an operator). A sweep right away leaves the failed job resting...
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path, archive);
    await api.ds.query(`UPDATE documents SET created_at = now() - interval '10 minutes' WHERE id = $1`, [id]);
    const sweeper = api.app.get(PendingSweeper);
    const job = await validate.getJob(id);
    if (Date.now() - (job?.finishedOn ?? 0) < 1000) expect(await sweeper.sweep()).toBe(0);
    // ...and once it has rested, the sweep replaces it (re-adding its id alone would do nothing).
    await new Promise((r) => setTimeout(r, 1100));
    expect(await sweeper.sweep()).toBe(1);
    const final = await waitForFinal(api, tenant.apiKey, id);
    expect(final.body.status).toBe('valid');
    expect(final.body.validation_error).toBeNull();
    expect(await validate.getFailedCount()).toBe(0);
  }, 60_000);
});

describe('OutageGate on a real queue', () => {
  let redis: Redis;
  const prefix = `sdft_outage_${process.pid}`;

  beforeAll(() => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  /** A real connection error of node-postgres, to a port where nothing listens. */
  async function refusedConnection(): Promise<unknown> {
    const client = new pg.Client({ host: '127.0.0.1', port: await freePort(), user: 'x', database: 'x' });
    return client.connect().then(
      () => new Error('connected'),
      (err: unknown) => err,
    );
  }

  it('tells an outage from a fault of the job', async () => {
    expect(isInfrastructureError(await refusedConnection())).toBe(true);
    expect(isInfrastructureError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isInfrastructureError({ driverError: { code: '57P01' }, message: 'terminating connection' })).toBe(true);
    expect(isInfrastructureError(new Error('Connection is closed.'))).toBe(true);
    // A receiver's or an ERP's failure, passed on in words, and the job's own faults are not outages.
    expect(isInfrastructureError(new Error('connect ECONNREFUSED 127.0.0.1:9 (receiver)'))).toBe(false);
    expect(isInfrastructureError(Object.assign(new Error('no such file'), { code: 'ENOENT' }))).toBe(false);
    expect(isInfrastructureError({ code: '23505', message: 'duplicate key value' })).toBe(false);
  });

  it('an outage keeps the attempts (a job with one attempt survives three), a fault of the job uses them', async () => {
    const name = 'outage-gate';
    const queue = new Queue(name, { connection: redis, prefix });
    const gate = new OutageGate(name, { maxDelayMs: 200 });
    const outage = await refusedConnection();
    const tries = new Map<string, number>();
    const worker = new Worker(
      name,
      (job: Job, token?: string) =>
        gate.run(job, token, async () => {
          const n = (tries.get(job.id!) ?? 0) + 1;
          tries.set(job.id!, n);
          if (job.data.kind === 'outage' && n <= 3) throw outage;
          if (job.data.kind === 'fault') throw new Error('the job itself is wrong');
          return n;
        }),
      { connection: redis, prefix },
    );
    try {
      const outageJob = await queue.add('x', { kind: 'outage' }, { attempts: 1 });
      const faultJob = await queue.add('x', { kind: 'fault' }, { attempts: 1 });
      await until(
        'both jobs finished',
        async () => (await outageJob.isCompleted()) && (await faultJob.isFailed()),
        20_000,
      );
      expect(await outageJob.isCompleted()).toBe(true);
      expect(tries.get(outageJob.id!)).toBe(4);
      expect(await faultJob.isFailed()).toBe(true);
      expect(tries.get(faultJob.id!)).toBe(1);
    } finally {
      await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
