import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReadinessChecks } from '../src/common/readiness.js';
import { startApp, type TestApp } from './helpers/app.js';
import { waitUntil } from './helpers/wait.js';

interface RawExchange {
  /** Everything the server sent before the connection ended. */
  received: string;
  /** How it ended: the server closed it, or it was still open when the test gave up. */
  ended: 'closed' | 'still open';
}

/**
 * A raw TCP client: writes `bytes`, then stays silent until the server closes the connection. Gives up
 * (reporting 'still open') far beyond the configured time-outs but well short of Node's own defaults.
 */
function sendAndWait(port: number, bytes: string, giveUpMs = 15_000): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ received, ended: 'still open' });
    }, giveUpMs);
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ received, ended: 'closed' });
    });
  });
}

async function listen(t: TestApp): Promise<number> {
  await t.app.listen(0, '127.0.0.1');
  return ((t.app.getHttpServer() as Server).address() as AddressInfo).port;
}

describe('readiness answers from a shared, briefly cached result (S15)', () => {
  let t: TestApp;
  let brief: TestApp;

  beforeAll(async () => {
    // A window longer than the test: every call below falls inside it.
    t = await startApp({ env: { READINESS_CACHE_MS: '600000' } });
    brief = await startApp({ shareWith: t, env: { READINESS_CACHE_MS: '200' } });
  });
  afterAll(async () => {
    await brief.close();
    await t.close();
  });

  it('runs the checks once for many callers within the window, concurrent or not', async () => {
    let runs = 0;
    t.app.get(ReadinessChecks).register('counted', () => {
      runs++;
      return Promise.resolve();
    });
    const concurrent = await Promise.all(Array.from({ length: 40 }, () => t.http().get('/health/ready')));
    for (let i = 0; i < 20; i++) concurrent.push(await t.http().get('/health/ready'));
    for (const res of concurrent) {
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: 'ok',
        checks: { database: 'ok', redis: 'ok', storage: 'ok', counted: 'ok' },
        details: { summary_backfill: { state: 'done', remaining: 0 } },
      });
    }
    expect(runs).toBe(1);
  });

  it('reports a dependency that went down once the window passes, the 503 cached as briefly, and recovery', async () => {
    let down = false;
    let runs = 0;
    brief.app.get(ReadinessChecks).register('dependency', () => {
      runs++;
      return down ? Promise.reject(new Error('connection refused')) : Promise.resolve();
    });
    await waitUntil(async () => (await brief.http().get('/health/ready')).body.checks?.dependency === 'ok', 'ok');
    down = true;
    const failed = await waitUntil(async () => {
      const res = await brief.http().get('/health/ready');
      return res.status === 503 ? res : null;
    }, 'the 503');
    expect(failed.body).toEqual({
      status: 'unavailable',
      checks: { database: 'ok', redis: 'ok', storage: 'ok', dependency: 'unavailable' },
      details: { summary_backfill: { state: 'done', remaining: 0 } },
    });
    const runsAtFailure = runs;
    down = false;
    await waitUntil(async () => (await brief.http().get('/health/ready')).status === 200, 'recovery');
    // Recovery came from a new check: the 503 was not kept.
    expect(runs).toBeGreaterThan(runsAtFailure);
  });
});

describe('HTTP server time-outs and headers', () => {
  let headers: TestApp;
  let request: TestApp;
  let idle: TestApp;
  let ports: { headers: number; request: number; idle: number };

  beforeAll(async () => {
    headers = await startApp({
      env: { HTTP_HEADERS_TIMEOUT_MS: '500', HTTP_KEEP_ALIVE_TIMEOUT_MS: '3000', PROCESS_ROLE: 'api' },
    });
    request = await startApp({
      shareWith: headers,
      env: { HTTP_HEADERS_TIMEOUT_MS: '500', HTTP_REQUEST_TIMEOUT_MS: '1000', PROCESS_ROLE: 'api' },
    });
    idle = await startApp({ shareWith: headers, env: { HTTP_IDLE_TIMEOUT_MS: '500', PROCESS_ROLE: 'api' } });
    ports = { headers: await listen(headers), request: await listen(request), idle: await listen(idle) };
  });
  afterAll(async () => {
    await idle.close();
    await request.close();
    await headers.close();
  });

  it('closes a connection whose request headers never end, once the headers time-out passes', async () => {
    const res = await sendAndWait(ports.headers, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a');
    expect(res.ended).toBe('closed');
    expect(res.received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes a connection whose body never ends, once the request time-out passes', async () => {
    const res = await sendAndWait(
      ports.request,
      'POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"url":',
    );
    expect(res.ended).toBe('closed');
    expect(res.received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes a connection that falls silent mid-request, once the idle time-out passes', async () => {
    const res = await sendAndWait(
      ports.idle,
      'POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"url":',
    );
    expect(res.ended).toBe('closed');
    expect(res.received).toBe('');
  });

  it('answers a complete request normally, announces the keep-alive time-out and names no server software', async () => {
    const res = await fetch(`http://127.0.0.1:${ports.headers}/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get('keep-alive')).toBe('timeout=3');
    expect(res.headers.get('x-powered-by')).toBeNull();
    expect(res.headers.get('server')).toBeNull();
  });
});

describe('Content-Security-Policy and the scheme of the request', () => {
  let plain: TestApp;
  let proxied: TestApp;
  beforeAll(async () => {
    plain = await startApp({ env: { PROCESS_ROLE: 'api' } });
    // The documented setting for a TLS-terminating proxy on the same host.
    proxied = await startApp({ shareWith: plain, env: { PROCESS_ROLE: 'api', TRUST_PROXY: '127.0.0.1' } });
  });
  afterAll(async () => {
    await proxied.close();
    await plain.close();
  });

  const cspOf = (res: { headers: Record<string, string> }) => res.headers['content-security-policy'] ?? '';

  it('leaves out upgrade-insecure-requests on /docs over plain http, so Swagger UI loads its scripts', async () => {
    const res = await plain.http().get('/docs/');
    expect(res.status).toBe(200);
    expect(cspOf(res)).toContain("script-src 'self'");
    expect(cspOf(res)).not.toContain('upgrade-insecure-requests');
  });

  it('ignores X-Forwarded-Proto from a proxy that is not trusted', async () => {
    const res = await plain.http().get('/docs/').set('X-Forwarded-Proto', 'https');
    expect(cspOf(res)).not.toContain('upgrade-insecure-requests');
  });

  it('sends upgrade-insecure-requests on a request a trusted proxy forwards over https', async () => {
    const https = await proxied.http().get('/docs/').set('X-Forwarded-Proto', 'https');
    expect(https.status).toBe(200);
    expect(cspOf(https)).toContain('upgrade-insecure-requests');
    const http = await proxied.http().get('/docs/').set('X-Forwarded-Proto', 'http');
    expect(cspOf(http)).not.toContain('upgrade-insecure-requests');
  });
});
