import { readdirSync } from 'node:fs';
import type { Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UploadSlots } from '../src/documents/upload-slots.js';
import { startApp, type TestApp } from './helpers/app.js';
import { countRows, storedFiles } from './helpers/billing.js';
import { upload } from './helpers/documents.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';

const BOUNDARY = 'sdf-slow-boundary';

/**
 * A raw client sending a request whose body never ends: the request head and `first`, then `bytes` more
 * every `everyMs`. `response` is what the server sent once the connection ended; `answeredAt` and
 * `closedAt` when its first bytes came and when the connection ended.
 */
function slowRequest(port: number, head: string, first: string, bytes: number, everyMs: number) {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  const times = { answeredAt: 0, closedAt: 0 };
  const response = new Promise<string>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      times.answeredAt ||= Date.now();
      received += chunk.toString('latin1');
    });
    socket.on('close', () => {
      times.closedAt = Date.now();
      resolve(received);
    });
    socket.on('error', () => undefined);
  });
  socket.write(head + first);
  const timer = setInterval(() => {
    if (!socket.destroyed) socket.write(Buffer.alloc(bytes, 0x41));
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
  return {
    response,
    times,
    /** The client goes away mid-body. */
    disconnect: () => {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

/** A raw client uploading a (never finished) file on POST /upload. */
function slowUpload(port: number, apiKey: string, bytes: number, everyMs: number) {
  const part =
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="slow.sdf"\r\n` +
    'Content-Type: application/octet-stream\r\n\r\nPK';
  const head =
    `POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${apiKey}\r\n` +
    `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n`;
  return slowRequest(port, head, part, bytes, everyMs);
}

/** The status line, the headers (lower-case names) and the parsed body of a raw answer. */
function parseAnswer(raw: string) {
  const [head, body] = [raw.slice(0, raw.indexOf('\r\n\r\n')), raw.slice(raw.indexOf('\r\n\r\n') + 4)];
  const [status, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { status, headers, body: JSON.parse(body) as { error: unknown } };
}

async function listen(t: TestApp): Promise<number> {
  await t.app.listen(0, '127.0.0.1');
  return ((t.app.getHttpServer() as Server).address() as AddressInfo).port;
}

describe('uploads in flight per tenant, across API processes, and stalled bodies', () => {
  let a: TestApp;
  let b: TestApp;
  let ports: { a: number; b: number };
  const env = {
    UPLOADS_IN_FLIGHT_PER_TENANT: '2',
    UPLOAD_BODY_STALL_MS: '1500',
    UPLOAD_BODY_MIN_BYTES: '256',
    PROCESS_ROLE: 'api',
  };

  beforeAll(async () => {
    a = await startApp({ env });
    b = await startApp({ env, shareWith: a });
    ports = { a: await listen(a), b: await listen(b) };
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  const inFlight = (tenant: TenantFixture) => a.app.get(UploadSlots).inFlight(tenant.id);
  const rowsOf = (tenant: TenantFixture) =>
    countRows(a, `SELECT count(*) AS n FROM documents WHERE tenant_id = $1`, [tenant.id]);
  /** Spool files left in the local store's temporary folder (where upload bodies are written). */
  const spoolFiles = () => {
    try {
      const names = readdirSync(join(a.config.env.STORAGE_LOCAL_DIR, '.tmp'), { recursive: true }) as string[];
      return names.filter((n) => n.endsWith('.part'));
    } catch {
      return [];
    }
  };

  it('refuses uploads past the bound with 429 and Retry-After on every process; other tenants go on; a client that disconnects frees its slot', async () => {
    const busy = await createTenant(a);
    const other = await createTenant(a);
    // Two slow but steady bodies (above the stall rate), one on each process.
    const first = slowUpload(ports.a, busy.apiKey, 512, 200);
    const second = slowUpload(ports.b, busy.apiKey, 512, 200);
    await waitUntil(async () => (await inFlight(busy)) === 2, 'two uploads in flight');

    const archive = (await buildSdf()).archive;
    for (const t of [a, b]) {
      for (const path of ['/upload', '/validate']) {
        const refused = await upload(t, busy.apiKey, archive, {}, path);
        expect(refused.status, path).toBe(429);
        expect(refused.body).toEqual({
          error: {
            code: 'RATE_LIMITED',
            message: 'Too many uploads in flight for this tenant (at most 2 at once)',
            details: [{ path: '/uploads_in_flight', message: 'must be at most 2' }],
          },
        });
        expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      }
    }
    // A refused body that is still arriving is not read on: the answer says so and the connection is
    // closed as soon as it has gone out (not held, reading a byte a second, until the request time-out).
    const third = slowUpload(ports.b, busy.apiKey, 1, 1000);
    const raw = await waitUntil(
      () => Promise.race([third.response, new Promise<null>((r) => setTimeout(() => r(null), 100))]),
      'the refused connection closed',
      10_000,
    );
    third.disconnect();
    const answer = parseAnswer(raw);
    expect(answer.status).toMatch(/^HTTP\/1\.1 429 /);
    expect(answer.headers.connection).toBe('close');
    expect(answer.body.error).toMatchObject({ code: 'RATE_LIMITED' });
    // Measured from the answer's arrival: the close follows it at once (well under a second here).
    expect(third.times.closedAt - third.times.answeredAt).toBeLessThan(2_000);

    // Another tenant is not held back by them.
    await upload(b, other.apiKey, archive).expect(201);
    await upload(a, other.apiKey, archive).expect(201);

    // A client gone mid-body gives its slot back at once (not when a lease lapses), and its spool file goes.
    first.disconnect();
    await waitUntil(async () => (await inFlight(busy)) === 1, 'the slot given back', 5_000);
    const stored = await upload(a, busy.apiKey, archive).expect(201);
    second.disconnect();
    await waitUntil(async () => (await inFlight(busy)) === 0, 'every slot given back', 5_000);
    await waitUntil(() => spoolFiles().length === 0, 'no spool file left', 5_000);
    expect(await rowsOf(busy)).toBe(1);
    expect(storedFiles(a, busy.id).map((f) => f.name)).toEqual([`${stored.body.id}.sdf`]);
  });

  it('cuts a body sending one byte a second after the stall time-out: 408, connection closed, nothing kept', async () => {
    const tenant = await createTenant(a);
    const trickle = slowUpload(ports.b, tenant.apiKey, 1, 1000);
    await waitUntil(async () => (await inFlight(tenant)) === 1, 'the upload in flight');
    const received = await waitUntil(
      () => Promise.race([trickle.response, new Promise<null>((r) => setTimeout(() => r(null), 100))]),
      'the connection cut',
      10_000,
    );
    // The server closed it (within 10 s: the stall rule, not the 60 s idle or 600 s request time-out).
    trickle.disconnect();
    const answer = parseAnswer(received);
    expect(answer.status).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer.headers.connection).toBe('close');
    expect(answer.body.error).toEqual({
      code: 'REQUEST_TIMEOUT',
      message: 'The request body stalled: less than 256 bytes arrived in 1500 ms',
      details: [{ path: '', message: 'must arrive at 256 bytes per 1500 ms at least' }],
    });
    await waitUntil(async () => (await inFlight(tenant)) === 0, 'the slot given back', 5_000);
    await waitUntil(() => spoolFiles().length === 0, 'no spool file left', 5_000);
    expect(await rowsOf(tenant)).toBe(0);
    expect(storedFiles(a, tenant.id)).toEqual([]);
  });

  it('cuts a JSON body that trickles on a tenant route the same way, before any handler sees it', async () => {
    const tenant = await createTenant(a);
    const head =
      `POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${tenant.apiKey}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 2000\r\n\r\n';
    const started = Date.now();
    const trickle = slowRequest(ports.a, head, '{"url": "https://example.com/', 1, 1000);
    const received = await waitUntil(
      () => Promise.race([trickle.response, new Promise<null>((r) => setTimeout(() => r(null), 100))]),
      'the connection cut',
      10_000,
    );
    trickle.disconnect();
    const answer = parseAnswer(received);
    expect(answer.status).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer.headers.connection).toBe('close');
    expect(answer.body.error).toMatchObject({
      code: 'REQUEST_TIMEOUT',
      message: 'The request body stalled: less than 256 bytes arrived in 1500 ms',
    });
    // Cut after the stall window, not before it.
    expect(trickle.times.answeredAt - started).toBeGreaterThanOrEqual(1_400);
    const hooks = await countRows(a, `SELECT count(*) AS n FROM webhooks WHERE tenant_id = $1`, [tenant.id]);
    expect(hooks).toBe(0);
  });
});
