import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killBetweenCommitAndCount, uncountedStorageChanges, type CountKillPoint } from './helpers/pg-locks.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { ServiceCluster, type ServiceProcess } from './helpers/service-processes.js';
import { waitUntil } from './helpers/wait.js';

const OPEN_SCHEMA = { type: 'object', required: ['document_type'] };

/**
 * M3 on the managed deployment: a delete frees its document's bytes, and bytes stored must go down by
 * exactly that, once. The API process that deletes is stopped for real in the instant between the
 * delete's commit and its count: the test holds a lock the delete's transaction needs, so it waits before
 * its commit; Redis refuses writes (CLIENT PAUSE WRITE) when the lock is let go, so the delete commits and
 * then waits on its count, and the process is killed there (SIGKILL). The figure a customer reads must
 * then equal the stored files of the documents the tenant still has.
 */
describe('bytes stored go down by a delete exactly once when the API process dies between its commit and its count (managed)', () => {
  let cluster: ServiceCluster;
  let api: ServiceProcess;
  let db: pg.Client;
  let redis: Redis;
  let tenant: { id: string; apiKey: string };

  beforeAll(async () => {
    cluster = await ServiceCluster.create({
      // No API process sweeps on its own unless a case starts one that does.
      env: { DEPLOYMENT_MODE: 'managed', USAGE_FLUSH_INTERVAL_MS: '3600000' },
    });
    api = await cluster.start('api');
    db = new pg.Client({ connectionString: cluster.postgres.url });
    await db.connect();
    redis = new Redis(cluster.redis.url, { maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
    tenant = await cluster.createTenant(api);
    await api
      .http()
      .patch(`/admin/tenants/${tenant.id}`)
      .set('Authorization', `Bearer ${cluster.adminToken()}`)
      .send({ plan: 'enterprise', limits: { rpm: 100_000 } })
      .expect(200);
  }, 120_000);
  afterEach(async () => {
    // Each case starts with one API process, whatever the last one left running.
    for (const p of cluster.processes) if (p !== api && p.running) await p.kill();
  });
  afterAll(async () => {
    redis?.disconnect();
    await db?.end();
    await cluster?.remove();
  });

  const upload = async (n: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const { archive } = await buildSdf({ schema: OPEN_SCHEMA });
      const res = await api.http().post('/upload').set('X-API-Key', tenant.apiKey).attach('file', archive, 'f.sdf');
      expect(res.status).toBe(201);
      ids.push(res.body.id as string);
    }
    return ids;
  };

  const fileOf = (id: string): string => join(cluster.storageDir, 'tenants', tenant.id, 'documents', `${id}.sdf`);

  /**
   * The stored files of the tenant's documents, summed: what bytes stored must say. A file the dead
   * process did not get to remove belongs to no document and is not the customer's.
   */
  const storedFiles = async (): Promise<number> => {
    const { rows } = await db.query<{ id: string }>(`SELECT id FROM documents WHERE tenant_id = $1`, [tenant.id]);
    return rows.reduce((sum, { id }) => sum + statSync(fileOf(id)).size, 0);
  };

  const storageBytes = async (via: ServiceProcess = api): Promise<number> => {
    const res = await via.http().get('/v1/billing/usage').set('X-API-Key', tenant.apiKey).expect(200);
    return res.body.storage_bytes as number;
  };

  const uncounted = () => uncountedStorageChanges(db);

  /**
   * Deletes `id` through `victim` and kills that process after the delete's commit (see
   * killBetweenCommitAndCount); the request is never answered. Returns the change the commit recorded.
   */
  const deleteAndKill = async (victim: ServiceProcess, id: string, when: CountKillPoint): Promise<number> => {
    let request: Promise<number | string> = Promise.resolve('not sent');
    const change = await killBetweenCommitAndCount({
      db,
      url: cluster.postgres.url,
      redis,
      victim,
      what: 'the delete',
      documentId: id,
      when,
      start: async () => {
        request = victim
          .http()
          .delete(`/delete/${id}`)
          .set('X-API-Key', tenant.apiKey)
          .then(
            (res) => res.status,
            () => 'no answer',
          );
      },
      committed: async () => (await db.query(`SELECT 1 FROM documents WHERE id = $1`, [id])).rowCount === 0,
    });
    // Never answered: the process died with the request in hand.
    expect(await request).toBe('no answer');
    return change;
  };

  it('the usage flush counts the freed bytes the dead process committed, once; an ordinary delete beside it counts at once', async () => {
    const victim = await cluster.start('api');
    const [a, b, c] = await upload(3);
    const before = await storageBytes();
    expect(before).toBe(await storedFiles());
    const size = statSync(fileOf(a!)).size;

    const change = await deleteAndKill(victim, a!, 'before-count');
    expect(change).toBe(-size);
    // The window, for real: the record is gone (its file too, or left for nobody), the figure still holds it.
    expect(await storedFiles()).toBe(before - size);
    expect(await storageBytes()).toBe(before);

    // An API process that flushes every half second counts what the dead one did not.
    const sweeper = await cluster.start('api', { USAGE_FLUSH_INTERVAL_MS: '500' });
    await waitUntil(async () => (await uncounted()).length === 0, 'the flush to count the freed bytes', 30_000);
    expect(await storageBytes(sweeper)).toBe(before - size);
    expect(await storageBytes()).toBe(await storedFiles());

    // Later flushes find nothing more to count: the figure stays.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await storageBytes()).toBe(await storedFiles());

    // An ordinary delete counts its freed bytes right after its commit and leaves no row behind.
    await api.http().delete(`/delete/${b}`).set('X-API-Key', tenant.apiKey).expect(204);
    expect(await uncounted()).toHaveLength(0);
    expect(existsSync(fileOf(b!))).toBe(false);
    expect(await storageBytes()).toBe(await storedFiles());
    expect(await storedFiles()).toBe(statSync(fileOf(c!)).size);
  }, 120_000);

  it('a process killed after its count reached Redis but before the row was deleted: the flush finds the mark and takes nothing off twice', async () => {
    const victim = await cluster.start('api');
    const [d] = await upload(1);
    const before = await storageBytes();
    expect(before).toBe(await storedFiles());
    const change = await deleteAndKill(victim, d!, 'before-delete');
    // Counted once already, the row still there.
    expect(await storageBytes()).toBe(before + change);
    expect(await storedFiles()).toBe(before + change);

    await cluster.start('api', { USAGE_FLUSH_INTERVAL_MS: '500' });
    await waitUntil(async () => (await uncounted()).length === 0, 'the flush to take the row', 30_000);
    expect(await storageBytes()).toBe(before + change);
    expect(await storageBytes()).toBe(await storedFiles());
  }, 120_000);

  it('Redis lost with the count not made: the figure seeded from PostgreSQL leaves the deleted document out, and counting the change later takes nothing off', async () => {
    const victim = await cluster.start('api');
    const [e] = await upload(1);
    const before = await storageBytes();
    const change = await deleteAndKill(victim, e!, 'before-count');
    expect(await storageBytes()).toBe(before);

    // Redis crashes (nothing persisted): the counters are gone.
    await cluster.redis.kill();
    await cluster.redis.start();
    await waitUntil(async () => redis.status === 'ready', 'the test client back on Redis', 10_000);
    // Seeded from the documents' sizes: the deleted one is not among them.
    expect(await storageBytes()).toBe(before + change);
    expect(await uncounted()).toHaveLength(1);

    const sweeper = await cluster.start('api', { USAGE_FLUSH_INTERVAL_MS: '500' });
    await waitUntil(async () => (await uncounted()).length === 0, 'the flush to take the change', 30_000);
    expect(await storageBytes(sweeper)).toBe(await storedFiles());
    expect(await storageBytes()).toBe(await storedFiles());
  }, 120_000);
});
