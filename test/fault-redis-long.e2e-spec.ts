import { randomBytes } from 'node:crypto';
import http from 'node:http';
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

const OUTAGE_MS = 90_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * POST /upload whose body stops halfway until `resume` resolves: the request passes authentication, takes
 * its upload slot and opens its spool file while Redis is there, and ends while it is away.
 */
function interruptedUpload(
  api: ServiceProcess,
  apiKey: string,
  archive: Buffer,
  resume: Promise<void>,
): Promise<Outcome> {
  const boundary = `----sdf${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.sdf"\r\n` +
      `Content-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const half = Math.floor(archive.length / 2);
  return new Promise((resolve, reject) => {
    let ended = 0;
    const req = http.request(
      `${api.url}/upload`,
      {
        method: 'POST',
        headers: {
          'X-API-Key': apiKey,
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
          'Content-Length': String(head.length + archive.length + tail.length),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            what: 'interrupted upload',
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Outcome['body'],
            retryAfter: res.headers['retry-after'] as string | undefined,
            requestId: res.headers['x-request-id'] as string | undefined,
            ms: Date.now() - ended,
            at: ended,
          }),
        );
      },
    );
    req.on('error', reject);
    req.write(Buffer.concat([head, archive.subarray(0, half)]));
    void resume.then(() => {
      ended = Date.now();
      req.end(Buffer.concat([archive.subarray(half), tail]));
    });
  });
}

describe('Redis down for 90 s while clients upload and read (API and worker as separate processes)', () => {
  let cluster: ServiceCluster;
  let api: ServiceProcess;
  let worker: ServiceProcess;
  let tenant: { id: string; apiKey: string };
  let archives: Buffer[];

  beforeAll(async () => {
    cluster = await ServiceCluster.create({
      env: QUICK_PENDING_SWEEP,
    });
    [api, worker] = await Promise.all([cluster.start('api'), cluster.start('worker')]);
    tenant = await cluster.createTenant(api);
    archives = await Promise.all(Array.from({ length: 4 }, async () => (await buildSdf()).archive));
  }, 120_000);
  afterAll(async () => {
    await cluster?.remove();
  });

  it('answers every request within seconds (503 with Retry-After while Redis is away), logs each, leaves no spool file, and recovers on its own', async () => {
    const key = { 'X-API-Key': tenant.apiKey };
    const before = await api.http().post('/upload').set(key).attach('file', archives[0]!, 'f.sdf').expect(201);
    const known = before.body.id as string;

    // Two clients upload and one reads, each about once a second, from before the outage to after it.
    const outcomes: Outcome[] = [];
    let stop = false;
    const uploader = async (n: number) => {
      for (let i = 0; !stop; i++) {
        const archive = archives[(n + i) % archives.length]!;
        outcomes.push(
          await timed('upload', () => api.http().post('/upload').set(key).attach('file', archive, 'f.sdf')),
        );
        await sleep(1_000);
      }
    };
    const reader = async () => {
      for (let i = 0; !stop; i++) {
        outcomes.push(
          i % 2 === 0
            ? await timed('list', () => api.http().get('/list').set(key))
            : await timed('read', () => api.http().get(`/sdf/${known}`).set(key)),
        );
        await sleep(1_000);
      }
    };
    const clients = Promise.all([uploader(0), uploader(1), reader()]);
    await sleep(3_000);

    // One upload has its spool file open when Redis goes, and ends its body while Redis is away.
    let resume!: () => void;
    const interrupted = interruptedUpload(api, tenant.apiKey, archives[1]!, new Promise<void>((r) => (resume = r)));
    await waitUntil(() => cluster.temporaryFiles().some((f) => f.name.endsWith('.part')), 'the upload spooling');

    await cluster.redis.kill();
    const down = Date.now();
    await sleep(2_000);
    resume();
    const ready = await api.http().get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.checks.redis).toBe('unavailable');
    await sleep(OUTAGE_MS - (Date.now() - down));
    // Back, empty, as after a crash of a Redis without persistence.
    await cluster.redis.start();
    const up = Date.now();
    await sleep(8_000);
    stop = true;
    await clients;
    const all = [...outcomes, await interrupted];

    // Every answer within seconds: a success, or 503 SERVICE_UNAVAILABLE in the error shape with Retry-After.
    expectSuccessOr503(all);
    // While Redis was away (answers begun a second after it went, up to its return) nothing needing it
    // succeeded, and every client kept being answered throughout.
    const during = outcomes.filter((o) => o.at > down + 1_000 && o.at + o.ms < up);
    expect(during.length).toBeGreaterThan(100);
    expect(during.filter((o) => o.status !== 503)).toEqual([]);
    // The upload that had its file in hand when Redis went was stored: it needed Redis no more.
    expect((await interrupted).status).toBe(201);
    // After the return, the clients are served again.
    const after = outcomes.filter((o) => o.at > up + 3_000);
    expect(after.length).toBeGreaterThan(5);
    expect(after.filter((o) => o.status >= 300)).toEqual([]);

    // Each answer, a refused one too, has its access-log line, with its status.
    await expectAccessLogged(api, all);

    // No spool file is left, empty or not.
    await waitUntil(() => cluster.temporaryFiles().length === 0, 'no temporary file', 10_000).catch(() => undefined);
    expect(cluster.temporaryFiles()).toEqual([]);

    // Every accepted document reaches its final state with no operator action, and nothing else exists.
    const accepted = new Set([known, ...all.filter((o) => o.status === 201).map((o) => o.body.id!)]);
    await expectAcceptedSettledValid(cluster, accepted);
    const fresh = await api.http().post('/upload').set(key).attach('file', archives[2]!, 'f.sdf').expect(201);
    await waitUntil(
      async () =>
        (
          await api
            .http()
            .get(`/sdf/${fresh.body.id as string}`)
            .set(key)
        ).body.status === 'valid',
      'a new upload validated',
      30_000,
    );

    // The log: JSON only, the outage said once and its end once per process, no error line per request.
    expectRedisOutageLoggedOnce([api, worker]);
    for (const p of [api, worker]) expect(p.logs.filter((l) => l.level === 'error')).toEqual([]);
  }, 180_000);
});
