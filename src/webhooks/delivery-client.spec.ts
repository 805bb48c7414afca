import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliver, signatureHeader } from './delivery-client.js';
import { TARGET_REFUSED, WebhookResolver } from './ssrf.js';

describe('signatureHeader', () => {
  it('is sha256= and the lowercase hex HMAC-SHA256 of the exact bytes', () => {
    const body = '{"id":"x","event":"document.signed"}';
    const expected = createHmac('sha256', 'sixteen-chars-ok').update(Buffer.from(body)).digest('hex');
    expect(signatureHeader('sixteen-chars-ok', body)).toBe(`sha256=${expected}`);
    // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
    expect(signatureHeader('Jefe', 'what do ya want for nothing?')).toBe(
      'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });
});

describe('deliver', () => {
  let server: http.Server;
  let hits = 0;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits++;
      req.resume();
      res.writeHead(req.url === '/redirect' ? 301 : 200, { Location: '/' }).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const request = (path: string, host = '127.0.0.1') => ({
    url: `http://${host}:${(server.address() as AddressInfo).port}${path}`,
    secret: 'sixteen-chars-ok',
    body: '{}',
    event: 'document.signed',
    deliveryId: 'd1',
  });
  const options = (guard: boolean) => ({ timeoutMs: 2000, guard, resolver: new WebhookResolver() });

  it('succeeds on 2xx and fails on 3xx without following it', async () => {
    expect(await deliver(request('/ok'), options(false))).toEqual({ ok: true, status: 200 });
    const before = hits;
    expect(await deliver(request('/redirect'), options(false))).toEqual({ ok: false, status: 301, reason: 'HTTP 301' });
    expect(hits - before).toBe(1);
  });

  it('with the guard on, refuses a loopback literal and a name resolving to loopback before any byte is sent', async () => {
    const before = hits;
    await expect(deliver(request('/ok'), options(true))).rejects.toMatchObject({ code: TARGET_REFUSED });
    await expect(deliver(request('/ok', 'localhost'), options(true))).rejects.toMatchObject({ code: TARGET_REFUSED });
    expect(hits).toBe(before);
  });
});
