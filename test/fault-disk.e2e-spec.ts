import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { projectRoot } from './helpers/processes.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { ServiceCluster, type LogLine, type ServiceProcess } from './helpers/service-processes.js';
import { waitUntil } from './helpers/wait.js';

/** The store's own small file system: a tmpfs this size, mounted over the cluster's storage folder. */
const DISK_BYTES = 32 * 1024 * 1024;
/** Readiness wants this much free; the disk starts with far more. */
const MIN_FREE_BYTES = 8 * 1024 * 1024;
/** Signing jobs queued while the disk is full must finish by themselves within this of space returning. */
const RESUME_BOUND_MS = 60_000;

const mount = (...args: string[]) => execFileSync('mount', args, { stdio: 'pipe' });

/**
 * The local store's disk fills up, then turns read-only, for real: a tmpfs of its own under an API and a
 * worker process. Writes fail with the kernel's ENOSPC and EROFS in every place they happen (the upload
 * spool, the signing thread's output, the pool's data.json copy), and the service must answer them as an
 * outage: 507/503 with a code and Retry-After, readiness saying why, jobs waiting without using their
 * attempts, one log line per episode, and nothing half-written left.
 */
describe('the storage disk fills up or turns read-only', () => {
  let cluster: ServiceCluster;
  let api: ServiceProcess;
  let worker: ServiceProcess;
  let apiKey: string;
  let mounted = false;
  const filler = () => join(cluster.storageDir, 'filler.bin');

  /** Writes into the disk until it is full: what any other writer on a shared disk can do. */
  const fillDisk = () => {
    const fd = openSync(filler(), 'a');
    const chunk = Buffer.alloc(1024 * 1024, 1);
    const small = Buffer.alloc(4096, 1);
    try {
      for (;;) writeSync(fd, chunk);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    }
    try {
      for (;;) writeSync(fd, small);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    } finally {
      closeSync(fd);
    }
  };
  /** A busy file system refuses to turn read-only while a file is open for writing: try again shortly. */
  const remount = async (mode: 'ro' | 'rw') => {
    await waitUntil(
      () => {
        try {
          mount('-o', `remount,${mode}`, cluster.storageDir);
          return true;
        } catch {
          return false;
        }
      },
      `storage remounted ${mode}`,
      10_000,
    );
  };

  const upload = async () => {
    const res = await api
      .http()
      .post('/upload')
      .set('X-API-Key', apiKey)
      .attach('file', (await buildSdf()).archive, 'f.sdf');
    return { status: res.status, body: res.body, retryAfter: res.headers['retry-after'] as string | undefined };
  };
  const produce = () => {
    const example = (file: string) =>
      JSON.parse(readFileSync(join(projectRoot, 'examples', 'invoice', `${file}.json`), 'utf8')) as unknown;
    return api
      .http()
      .post('/sdf/produce')
      .set('X-API-Key', apiKey)
      .send({ data: example('data'), schema: example('schema'), meta: example('meta') });
  };
  const record = async (id: string) =>
    (await api.http().get(`/sdf/${id}`).set('X-API-Key', apiKey).expect(200)).body as Record<string, unknown>;
  const readiness = async () => {
    const res = await api.http().get('/health/ready');
    return {
      status: res.status,
      body: res.body as { checks: Record<string, string>; reasons?: Record<string, string> },
    };
  };
  /** Valid, unsigned documents, uploaded while there is space. */
  const validDocuments = async (n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await upload();
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      ids.push(res.body.id as string);
    }
    for (const id of ids) {
      await waitUntil(async () => (await record(id)).status === 'valid', `document ${id} valid`, 30_000);
    }
    return ids;
  };
  const signAll = async (ids: string[]) => {
    for (const id of ids) await api.http().post(`/sign/${id}`).set('X-API-Key', apiKey).expect(202);
  };
  const since = (proc: ServiceProcess, from: number, match: (l: LogLine) => boolean) =>
    proc.logs.slice(from).filter(match);
  const errorLines = (proc: ServiceProcess, from: number) => since(proc, from, (l) => l.level === 'error');

  /** Space returns: the file that filled the disk goes. */
  const freeDisk = () => rmSync(filler(), { force: true });

  beforeAll(async () => {
    cluster = await ServiceCluster.create({
      env: { STORAGE_MIN_FREE_BYTES: String(MIN_FREE_BYTES), READINESS_CACHE_MS: '0' },
    });
    mkdirSync(cluster.storageDir, { recursive: true });
    mount('-t', 'tmpfs', '-o', `size=${DISK_BYTES},mode=0700`, 'sdf-fault-disk', cluster.storageDir);
    mounted = true;
    [api, worker] = await Promise.all([cluster.start('api'), cluster.start('worker')]);
    apiKey = (await cluster.createTenant(api)).apiKey;
  }, 120_000);
  afterAll(async () => {
    if (mounted) freeDisk();
    await Promise.all((cluster?.processes ?? []).map((p) => p.kill()));
    if (mounted) execFileSync('umount', ['-l', cluster.storageDir]);
    await cluster?.remove();
  });

  it('a full disk: uploads and produce answer 507 STORAGE_FULL with Retry-After, readiness says why, one log line each way', async () => {
    expect((await readiness()).body.checks.storage).toBe('ok');
    const [kept] = await validDocuments(1);
    const apiFrom = api.logs.length;

    fillDisk();
    onTestFinished(freeDisk);
    for (let i = 0; i < 5; i++) {
      const res = await upload();
      expect(res.status, JSON.stringify(res.body)).toBe(507);
      expect(res.body.error.code).toBe('STORAGE_FULL');
      expect(Number(res.retryAfter)).toBeGreaterThan(0);
    }
    const produced = await produce();
    expect(produced.status, JSON.stringify(produced.body)).toBe(507);
    expect(produced.body.error.code).toBe('STORAGE_FULL');
    // The first read of data.json keeps a copy of it beside the file: that write fails too.
    const data = await api.http().get(`/data/${kept}`).set('X-API-Key', apiKey);
    expect(data.status, JSON.stringify(data.body)).toBe(507);
    expect(data.body.error.code).toBe('STORAGE_FULL');

    const ready = await readiness();
    expect(ready.status).toBe(503);
    expect(ready.body.checks.storage).toBe('unavailable');
    expect(ready.body.reasons?.storage).toMatch(/^free space 0 bytes is below STORAGE_MIN_FREE_BYTES/);

    // Seven refusals, one line: the episode's start; no error line, no stack.
    const started = since(api, apiFrom, (l) => /^storage is full/.test(l.msg ?? ''));
    expect(started, api.dump()).toHaveLength(1);
    expect(errorLines(api, apiFrom), api.dump()).toEqual([]);
    expect(cluster.temporaryFiles()).toEqual([]);

    freeDisk();
    await waitUntil(async () => (await readiness()).status === 200, 'ready again', 10_000);
    expect((await upload()).status).toBe(201);
    expect((await api.http().get(`/data/${kept}`).set('X-API-Key', apiKey)).status).toBe(200);
    const ended = since(api, apiFrom, (l) => l.msg === 'storage takes writes again');
    expect(ended, api.dump()).toHaveLength(1);
    expect(ended[0]).toMatchObject({ fault: 'full', refused: 7 });
    expect(ended[0]!.outage_ms).toBeGreaterThan(0);
  }, 120_000);

  it('signing jobs queued while the disk is full keep their attempts and finish by themselves once space returns', async () => {
    const ids = await validDocuments(10);
    const workerFrom = worker.logs.length;
    fillDisk();
    onTestFinished(freeDisk);
    await signAll(ids);
    // Beyond the 6 s that three attempts with their backoff take: none may have used them up.
    await worker.waitForLog(
      (l) => l.queue === 'sign-sdf' && /^a dependency is unreachable/.test(l.msg ?? ''),
      'the sign queue postponing',
    );
    await new Promise((r) => setTimeout(r, 10_000));
    for (const id of ids) {
      const doc = await record(id);
      expect(doc.status).toBe('valid');
      expect(doc.signing_error ?? null).toBeNull();
    }
    expect(since(worker, workerFrom, (l) => l.msg === 'signing failed for good')).toEqual([]);

    freeDisk();
    const back = Date.now();
    await waitUntil(
      async () => (await Promise.all(ids.map(record))).every((d) => d.status === 'signed'),
      'every document signed',
      RESUME_BOUND_MS,
    );
    expect(Date.now() - back).toBeLessThan(RESUME_BOUND_MS);
    const lines = since(worker, workerFrom, (l) => l.queue === 'sign-sdf' && typeof l.msg === 'string');
    // One line when the queue met the full disk and one when it resumed, not one per job.
    expect(lines.filter((l) => /^a dependency is unreachable/.test(l.msg!))).toHaveLength(1);
    expect(lines.filter((l) => /^dependencies answer again/.test(l.msg!))).toHaveLength(1);
    expect(errorLines(worker, workerFrom), worker.dump()).toEqual([]);
  }, 180_000);

  it('a read-only disk: uploads answer 503 STORAGE_UNAVAILABLE, signing waits, and both resume once it is writable', async () => {
    const ids = await validDocuments(3);
    const apiFrom = api.logs.length;
    await remount('ro');
    try {
      const res = await upload();
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body.error.code).toBe('STORAGE_UNAVAILABLE');
      expect(Number(res.retryAfter)).toBeGreaterThan(0);
      const ready = await readiness();
      expect(ready.status).toBe(503);
      expect(ready.body.reasons?.storage).toBe('the storage disk takes no writes (EROFS)');
      await signAll(ids);
      await worker.waitForLog(
        (l) => l.queue === 'sign-sdf' && /EROFS/.test(String(l.reason)),
        'the sign queue postponing on EROFS',
      );
      await new Promise((r) => setTimeout(r, 8_000));
      for (const id of ids) expect((await record(id)).status).toBe('valid');
    } finally {
      await remount('rw');
    }
    await waitUntil(
      async () => (await Promise.all(ids.map(record))).every((d) => d.status === 'signed'),
      'every document signed',
      RESUME_BOUND_MS,
    );
    const after = await upload();
    expect(after.status).toBe(201);
    // Judged like any other upload once the disk takes writes again.
    const afterId = (after.body as { id: string }).id;
    await waitUntil(
      async () => (await record(afterId)).status === 'valid',
      'the upload after the outage valid',
      60_000,
    );
    expect(since(api, apiFrom, (l) => /^storage takes no writes/.test(l.msg ?? ''))).toHaveLength(1);
    expect(since(api, apiFrom, (l) => l.msg === 'storage takes writes again')).toHaveLength(1);
  }, 180_000);

  it('afterwards every record has its file, every file its record, nothing is pending and no temporary file is left', async () => {
    const db = new pg.Client({ connectionString: cluster.postgres.url });
    await db.connect();
    try {
      const rows = (
        await db.query<{ storage_key: string; status: string }>(`SELECT storage_key, status FROM documents`)
      ).rows;
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.filter((r) => r.status === 'pending')).toEqual([]);
      const stored: string[] = [];
      const walk = (folder: string) => {
        for (const entry of readdirSync(join(cluster.storageDir, folder), { withFileTypes: true })) {
          const key = folder === '' ? entry.name : `${folder}/${entry.name}`;
          if (key === '.tmp') continue;
          if (entry.isDirectory()) walk(key);
          else if (key.endsWith('.sdf')) stored.push(key);
        }
      };
      walk('');
      expect(new Set(stored)).toEqual(new Set(rows.map((r) => r.storage_key)));
    } finally {
      await db.end();
    }
    expect(cluster.temporaryFiles()).toEqual([]);
    expect(existsSync(filler())).toBe(false);
  });
});
