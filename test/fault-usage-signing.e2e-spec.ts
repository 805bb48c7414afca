import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killBetweenCommitAndCount, uncountedStorageChanges, type CountKillPoint } from './helpers/pg-locks.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { ServiceCluster, type ServiceProcess } from './helpers/service-processes.js';
import { waitUntil } from './helpers/wait.js';

const OPEN_SCHEMA = { type: 'object', required: ['document_type'] };

/**
 * M3 on the managed deployment: a signing grows the stored file, and bytes stored must grow by exactly
 * that, once. The sign job is stopped for real in the instant between its commit and its count: the
 * test holds a lock its settle needs, so the job waits before its commit; Redis refuses writes
 * (CLIENT PAUSE WRITE) when the lock is let go, so the job commits and then waits on its count, and the
 * worker is killed there (SIGKILL). The figure a customer reads must then equal the stored files.
 */
describe('bytes stored grow by a signature exactly once when the sign job dies between its commit and its count (managed)', () => {
  let cluster: ServiceCluster;
  let api: ServiceProcess;
  let db: pg.Client;
  let redis: Redis;
  let queue: Queue;
  let tenant: { id: string; apiKey: string };

  beforeAll(async () => {
    cluster = await ServiceCluster.create({
      env: {
        DEPLOYMENT_MODE: 'managed',
        // The first API process never sweeps on its own: what counts a change is the job's rerun.
        USAGE_FLUSH_INTERVAL_MS: '3600000',
        WORKER_LOCK_DURATION_MS: '2000',
        WORKER_STALLED_INTERVAL_MS: '500',
      },
    });
    api = await cluster.start('api');
    db = new pg.Client({ connectionString: cluster.postgres.url });
    await db.connect();
    redis = new Redis(cluster.redis.url, { maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
    queue = new Queue('sign-sdf', { connection: { url: cluster.redis.url }, prefix: 'sdf' });
    queue.on('error', () => undefined);
    tenant = await cluster.createTenant(api);
    await api
      .http()
      .patch(`/admin/tenants/${tenant.id}`)
      .set('Authorization', `Bearer ${cluster.adminToken()}`)
      .send({ plan: 'enterprise', limits: { rpm: 100_000 } })
      .expect(200);
  }, 120_000);
  afterEach(async () => {
    // Each case starts with no worker and one API process, whatever the last one left running.
    for (const p of cluster.processes) if (p !== api && p.running) await p.kill();
  });
  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    await db?.end();
    await cluster?.remove();
  });

  const uploadValid = async (n: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const { archive } = await buildSdf({ schema: OPEN_SCHEMA });
      const res = await api.http().post('/upload').set('X-API-Key', tenant.apiKey).attach('file', archive, 'f.sdf');
      expect(res.status).toBe(201);
      ids.push(res.body.id as string);
    }
    await waitUntil(
      async () =>
        (await db.query(`SELECT 1 FROM documents WHERE id = ANY($1) AND status = 'valid'`, [ids])).rowCount === n,
      `${n} documents valid`,
      30_000,
    );
    return ids;
  };

  /** The tenant's .sdf files in the store, summed: what bytes stored must say. */
  const onDisk = (): number => {
    const folder = join(cluster.storageDir, 'tenants', tenant.id, 'documents');
    return readdirSync(folder)
      .filter((name) => name.endsWith('.sdf'))
      .reduce((sum, name) => sum + statSync(join(folder, name)).size, 0);
  };

  const storageBytes = async (via: ServiceProcess = api): Promise<number> => {
    const res = await via.http().get('/v1/billing/usage').set('X-API-Key', tenant.apiKey).expect(200);
    return res.body.storage_bytes as number;
  };

  const uncounted = () => uncountedStorageChanges(db);

  /**
   * Signs `id` on `worker` and kills that worker after the signing's commit (see
   * killBetweenCommitAndCount). Returns the growth the commit recorded.
   */
  const signAndKill = (worker: ServiceProcess, id: string, when: CountKillPoint): Promise<number> =>
    killBetweenCommitAndCount({
      db,
      url: cluster.postgres.url,
      redis,
      victim: worker,
      what: 'the sign job',
      documentId: id,
      when,
      start: () => api.http().post(`/sign/${id}`).set('X-API-Key', tenant.apiKey).expect(202),
      committed: async () =>
        (await db.query(`SELECT 1 FROM documents WHERE id = $1 AND status = 'signed'`, [id])).rowCount === 1,
    });

  it('a rerun of the job by the next worker counts the growth the dead one committed, and another run adds nothing', async () => {
    const w1 = await cluster.start('worker');
    const [a, b] = await uploadValid(2);
    const before = onDisk();
    expect(await storageBytes()).toBe(before);

    const growth = await signAndKill(w1, a!, 'before-count');
    expect(growth).toBeGreaterThan(0);
    // The window, for real: the file in the store is signed, the figure does not hold it yet.
    expect(onDisk()).toBe(before + growth);
    expect(await storageBytes()).toBe(before);

    const w2 = await cluster.start('worker');
    await waitUntil(async () => (await uncounted()).length === 0, 'the rerun to count the growth', 30_000);
    expect(
      w2.logs.some((l) => l.msg === 'a stalled job was taken over: the worker that held it stopped renewing its lock'),
    ).toBe(true);
    expect(await storageBytes()).toBe(onDisk());

    // The job runs again (a second delivery of the same work): the document is signed, nothing is left to count.
    await queue.add('sign', { tenantId: tenant.id, documentId: a }, { jobId: `again-${a}` });
    await waitUntil(async () => (await queue.getJobState(`again-${a}`)) === 'completed', 'the second run', 30_000);
    expect(await storageBytes()).toBe(onDisk());

    // An ordinary signing beside it counts its growth once too.
    await api.http().post(`/sign/${b}`).set('X-API-Key', tenant.apiKey).expect(202);
    await waitUntil(
      async () => (await db.query(`SELECT 1 FROM documents WHERE id = $1 AND status = 'signed'`, [b])).rowCount === 1,
      'the second signing',
      30_000,
    );
    await waitUntil(async () => (await uncounted()).length === 0, 'its growth counted', 30_000);
    expect(await storageBytes()).toBe(onDisk());
  }, 120_000);

  it('a worker killed after its count reached Redis but before the row was deleted: the rerun finds the mark and adds nothing', async () => {
    const w1 = await cluster.start('worker');
    const [e] = await uploadValid(1);
    const before = onDisk();
    const growth = await signAndKill(w1, e!, 'before-delete');
    // Counted once already, the row still there.
    expect(await storageBytes()).toBe(before + growth);
    expect(onDisk()).toBe(before + growth);

    await cluster.start('worker');
    await waitUntil(async () => (await uncounted()).length === 0, 'the rerun to take the row', 30_000);
    await waitUntil(async () => (await queue.getJobState(e!)) === 'completed', 'the rerun', 30_000);
    expect(await storageBytes()).toBe(onDisk());
  }, 120_000);

  it('a growth no job will count again is counted by the usage flush; a rerun after it adds nothing', async () => {
    const w1 = await cluster.start('worker');
    const [c] = await uploadValid(1);
    const before = onDisk();
    const growth = await signAndKill(w1, c!, 'before-count');
    expect(await storageBytes()).toBe(before);

    // An API process that flushes every half second counts what no worker has counted.
    const sweeper = await cluster.start('api', { USAGE_FLUSH_INTERVAL_MS: '500' });
    await waitUntil(async () => (await uncounted()).length === 0, 'the flush to count the growth', 30_000);
    expect(await storageBytes(sweeper)).toBe(before + growth);
    expect(await storageBytes()).toBe(onDisk());

    // The stalled job still runs when a worker comes: it finds the document signed and the growth counted.
    const w2 = await cluster.start('worker');
    await w2.waitForLog(
      (l) => l.msg === 'a stalled job was taken over: the worker that held it stopped renewing its lock',
      'the stalled job taken over',
    );
    await waitUntil(async () => (await queue.getJobState(c!)) === 'completed', 'the rerun', 30_000);
    expect(await storageBytes()).toBe(onDisk());
  }, 120_000);

  it('Redis lost with the count not made: the figure seeded from PostgreSQL holds the growth, and counting the change later adds nothing', async () => {
    const w1 = await cluster.start('worker');
    const [d] = await uploadValid(1);
    const before = onDisk();
    const growth = await signAndKill(w1, d!, 'before-count');
    expect(await storageBytes()).toBe(before);

    // Redis crashes (nothing persisted): the counters, the queues and the job are gone.
    await cluster.redis.kill();
    await cluster.redis.start();
    await waitUntil(async () => redis.status === 'ready', 'the test client back on Redis', 10_000);
    // Seeded from the documents' sizes, the signed one at its signed size.
    expect(await storageBytes()).toBe(before + growth);
    expect(await uncounted()).toHaveLength(1);

    const sweeper = await cluster.start('api', { USAGE_FLUSH_INTERVAL_MS: '500' });
    await waitUntil(async () => (await uncounted()).length === 0, 'the flush to take the change', 30_000);
    expect(await storageBytes(sweeper)).toBe(onDisk());
    expect(await storageBytes()).toBe(onDisk());
  }, 120_000);
});
