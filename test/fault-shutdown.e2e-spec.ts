import { mkdirSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { ServiceCluster, type ServiceProcess } from './helpers/service-processes.js';
import { waitUntil } from './helpers/wait.js';

type Outcome = { kind: 'answer'; status: number; body: string } | { kind: 'refused' } | { kind: 'cut'; error: string };

/**
 * A multipart upload sent in `chunks` pieces `everyMs` apart, through Node's HTTP client, which tells a
 * complete answer (every byte of its declared length) from a cut one.
 */
function uploadSlowly(port: number, apiKey: string, archive: Buffer, chunks: number, everyMs: number) {
  const boundary = `b${Math.random().toString(36).slice(2)}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.sdf"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    ),
    archive,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  let started = false;
  const outcome = new Promise<Outcome>((resolve) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/upload',
        agent: false,
        headers: {
          'X-API-Key': apiKey,
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
          'Content-Length': body.length,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () =>
          res.complete
            ? resolve({ kind: 'answer', status: res.statusCode!, body: text })
            : resolve({ kind: 'cut', error: 'incomplete body' }),
        );
        res.on('error', (err) => resolve({ kind: 'cut', error: String(err) }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve(err.code === 'ECONNREFUSED' ? { kind: 'refused' } : { kind: 'cut', error: String(err) }),
    );
    req.on('socket', (socket) => socket.on('connect', () => (started = true)));
    const size = Math.ceil(body.length / chunks);
    let i = 0;
    const next = () => {
      if (i >= chunks) return void req.end();
      req.write(body.subarray(i * size, (i + 1) * size));
      i++;
      setTimeout(next, everyMs);
    };
    next();
  });
  return { outcome, started: () => started };
}

describe('SIGTERM: a bounded drain, exit 0; what an API process killed leaves, and how soon it goes', () => {
  let cluster: ServiceCluster;
  let worker: ServiceProcess;
  let tenant: { id: string; apiKey: string };
  let archives: Buffer[];

  beforeAll(async () => {
    cluster = await ServiceCluster.create({
      env: { SHUTDOWN_TIMEOUT_MS: '8000', UPLOAD_BODY_STALL_MS: '30000', UPLOADS_IN_FLIGHT_PER_TENANT: '64' },
    });
    worker = await cluster.start('worker');
    archives = await Promise.all(Array.from({ length: 32 }, async () => (await buildSdf()).archive));
  }, 120_000);
  afterAll(async () => {
    await cluster?.remove();
  });

  it('32 uploads in flight each get a complete answer, later clients a refused connection, a slow one is cut at the bound; exit 0, logged, no job lost', async () => {
    const api = await cluster.start('api');
    tenant = await cluster.createTenant(api);
    // One upload that would take a minute, first, until the service is writing it to its spool: then the
    // drain's bound is what ends it, not a race between its request's headers and the signal.
    const slow = uploadSlowly(api.port!, tenant.apiKey, archives[0]!, 600, 100);
    await waitUntil(
      () => cluster.temporaryFiles().some((f) => f.name.endsWith('.part')),
      'the slow upload in the spool',
      10_000,
    );
    // And 32 uploads sent over about two seconds each, all of them in the spool before the signal: a
    // connection whose request the service has not read yet is an idle one, which a drain closes.
    const uploads = archives.map((a) => uploadSlowly(api.port!, tenant.apiKey, a, 20, 100));
    await waitUntil(
      () => cluster.temporaryFiles().filter((f) => f.name.endsWith('.part')).length === 33,
      'every upload in the spool',
      10_000,
    );
    const signalled = Date.now();
    api.signal('SIGTERM');
    const exit = await api.exited;
    const drainMs = Date.now() - signalled;
    const late = await uploadSlowly(api.port!, tenant.apiKey, archives[1]!, 1, 0).outcome;

    expect(exit).toEqual({ code: 0, signal: null });
    // Below an orchestrator's usual 10 s grace, however slow the slowest client.
    expect(drainMs).toBeLessThan(9_500);
    const outcomes = await Promise.all(uploads.map((u) => u.outcome));
    // Any other outcome says what it was, with the drain's length and what the process said meanwhile.
    const said = () => `drain ${drainMs} ms; the API's lines: ${JSON.stringify(api.logs.slice(-20))}`;
    for (const o of outcomes)
      expect(o.kind === 'answer' || o.kind === 'refused', `${JSON.stringify(o)}; ${said()}`).toBe(true);
    const answered = outcomes.filter((o): o is Extract<Outcome, { kind: 'answer' }> => o.kind === 'answer');
    expect(answered.length).toBe(32);
    for (const a of answered) expect(a.status).toBe(201);
    expect((await slow.outcome).kind).toBe('cut');
    expect(late).toEqual({ kind: 'refused' });
    // The cut upload's spool file went with the process that cut it (not left to a later sweep).
    expect(cluster.temporaryFiles().filter((f) => f.name.endsWith('.part'))).toEqual([]);

    const began = api.logs.find((l) => l.msg === 'shutdown began');
    const done = api.logs.find((l) => l.msg === 'shutdown complete');
    expect(began).toMatchObject({ signal: 'SIGTERM', timeout_ms: 8000 });
    expect(done).toMatchObject({ signal: 'SIGTERM', requests_cut: 1 });
    expect(api.otherLines).toEqual([]);

    // No job lost: every accepted upload is validated by the worker.
    const ids = answered.map((a) => (JSON.parse(a.body) as { id: string }).id);
    const db = new pg.Client({ connectionString: cluster.postgres.url });
    await db.connect();
    try {
      await waitUntil(
        async () =>
          (
            await db.query<{ n: string }>(
              `SELECT count(*) AS n FROM documents WHERE id = ANY($1) AND status = 'valid'`,
              [ids],
            )
          ).rows[0]!.n === '32',
        '32 documents valid',
        30_000,
      );
      expect((await db.query(`SELECT 1 FROM documents`)).rowCount).toBe(32);
    } finally {
      await db.end();
    }
  }, 60_000);

  it('a worker on SIGTERM exits 0 with its two log lines', async () => {
    worker.signal('SIGTERM');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    expect(worker.logs.filter((l) => l.msg === 'shutdown began' || l.msg === 'shutdown complete')).toHaveLength(2);
  });

  it("a process killed mid-upload leaves a partial file; the next start removes it, and leaves a live process's files alone", async () => {
    const api = await cluster.start('api');
    const slow = uploadSlowly(api.port!, tenant.apiKey, archives[2]!, 600, 100);
    await waitUntil(() => cluster.temporaryFiles().some((f) => f.name.endsWith('.part')), 'a spooled upload', 10_000);
    await api.kill();
    await slow.outcome;
    const left = cluster.temporaryFiles();
    expect(left.length).toBeGreaterThan(0);
    // A file another host's live process is writing right now.
    const other = join(cluster.storageDir, '.tmp', `1@another-${hostname()}`);
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, 'upload.part'), 'in use');

    const next = await cluster.start('api');
    expect(cluster.temporaryFiles().map((f) => f.name)).toEqual([join(`1@another-${hostname()}`, 'upload.part')]);
    expect(next.logs.find((l) => l.msg === 'stale temporary files removed')).toMatchObject({ count: left.length });
  }, 60_000);

  it("an API process killed holding a tenant's upload slots: the slots are free again within UPLOAD_SLOT_LEASE_MS", async () => {
    const env = { UPLOADS_IN_FLIGHT_PER_TENANT: '2', UPLOAD_SLOT_LEASE_MS: '3000' };
    const [doomed, other] = await Promise.all([cluster.start('api', env), cluster.start('api', env)]);
    const holder = await cluster.createTenant(other);
    const validate = async () =>
      (await other.http().post('/validate').set('X-API-Key', holder.apiKey).attach('file', archives[3]!, 'f.sdf'))
        .status;
    // Two uploads that would take a minute hold both slots of the tenant, on the process to be killed.
    const held = [0, 1].map(() => uploadSlowly(doomed.port!, holder.apiKey, archives[4]!, 600, 100));
    // Both bodies are being spooled (so both hold a slot) before the other process is asked.
    const spooled = () =>
      cluster.temporaryFiles().filter((f) => f.name.startsWith(`${doomed.child.pid}@`) && f.name.endsWith('.part'))
        .length;
    await waitUntil(() => spooled() === 2, 'both uploads spooling', 10_000);
    expect(await validate()).toBe(429);

    const killedAt = Date.now();
    await doomed.kill();
    await Promise.all(held.map((h) => h.outcome));
    await waitUntil(async () => (await validate()) === 200, 'a slot free again', 20_000);
    // The lease (3 s) lapses without its heartbeat; measured with room for a loaded machine.
    expect(Date.now() - killedAt).toBeLessThan(8_000);
  }, 60_000);
});
