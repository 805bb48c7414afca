import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { accessibilityProblems, launchBrowser, listen, openProbe } from './helpers/browser.js';

const VECTORS = join(process.cwd(), 'test', 'vectors');

/**
 * `/app/read?jwks=<address>`: a key list named by a link decides what the reader calls "Trusted", so the
 * address is checked before it reaches the page policy, and the page fetches it only when the person says so.
 */
describe('a key list named in the reader address', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let issuer: Server;
  let issuerOrigin: string;
  let fetched = 0;

  beforeAll(async () => {
    t = await startApp();
    base = await listen(t.app);
    // Another issuer's key list, on another origin (loopback: plain http is admitted there only).
    const jwks = readFileSync(join(VECTORS, 'keys', 'es256-public.jwks.json'));
    issuer = createServer((req, res) => {
      if (req.url !== '/keys.json') return res.writeHead(404).end();
      fetched++;
      res.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' }).end(jwks);
    });
    await new Promise<void>((resolve) => issuer.listen(0, '127.0.0.1', resolve));
    issuerOrigin = `http://127.0.0.1:${(issuer.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => issuer?.close(resolve));
    await t?.close();
  });

  const page = (query: string) => t.http().get(`/app/read?${query}`);

  it('refuses an address the page policy cannot hold, or that is not plain https, with 400 and a reason', async () => {
    const refused = [
      'http://a;b/keys.json',
      'https://a;b/keys.json',
      'https://a,b/keys.json',
      'https://issuer.example;script-src *',
      'http://*/',
      'https://*',
      'https://*.example.com/keys.json',
      'javascript:alert(1)',
      'data:application/json,{"keys":[]}',
      'http://issuer.example/keys.json',
      'ftp://issuer.example/keys.json',
      'https://user:secret@issuer.example/keys.json',
      '//issuer.example/keys.json',
      'keys.json',
    ];
    for (const value of refused) {
      const res = await page(`jwks=${encodeURIComponent(value)}`);
      expect(res.status, value).toBe(400);
      expect(res.body.error, value).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: [{ path: '/jwks' }],
      });
      expect(res.body.error.message, value).toMatch(/^The key list address is refused: ./);
      expect(res.headers['content-security-policy'] ?? '', value).not.toContain('*');
    }
    const many = await page(Array.from({ length: 5 }, (_, i) => `jwks=https://k${i}.example/keys.json`).join('&'));
    expect(many.status).toBe(400);
    expect(many.body.error.message).toContain('at most 4');
    // One bad address among good ones refuses the page.
    const mixed = await page(
      `jwks=${encodeURIComponent('/.well-known/sdf-keys/acme')}&jwks=${encodeURIComponent('https://*')}`,
    );
    expect(mixed.status).toBe(400);
  });

  it('admits an https origin, a loopback http one and a path here; the policy names exactly those origins', async () => {
    const cases: [string, string][] = [
      ['https://issuer.example/.well-known/sdf-keys/acme', "connect-src 'self' https://issuer.example;"],
      ['https://ISSUER.example:8443/keys.json', "connect-src 'self' https://issuer.example:8443;"],
      [`${issuerOrigin}/keys.json`, `connect-src 'self' ${issuerOrigin};`],
      ['http://localhost:9/keys.json', "connect-src 'self' http://localhost:9;"],
      ['/.well-known/sdf-keys/acme', "connect-src 'self';"],
    ];
    for (const [value, directive] of cases) {
      const res = await page(`jwks=${encodeURIComponent(value)}`).expect(200);
      const csp = res.headers['content-security-policy'] as string;
      expect(csp, value).toContain(directive);
      expect(csp, value).not.toContain('*');
    }
  });

  it('fetches a linked key list only after the person confirms it, and the verdict names its origin', async () => {
    const jwksUrl = `${issuerOrigin}/keys.json`;
    const probe = await openProbe(browser);
    try {
      await probe.page.goto(`${base}/app/read?jwks=${encodeURIComponent(jwksUrl)}`);
      const confirm = probe.page.getByRole('button', { name: `Fetch keys from ${issuerOrigin}` });
      await confirm.waitFor();
      // A file read before the yes is judged without the link's keys.
      await probe.page.setInputFiles('#sdf-file', join(VECTORS, 'es256-signed.sdf'));
      await probe.page.getByTestId('reader-result').waitFor({ timeout: 30_000 });
      await probe.page.getByRole('tab', { name: 'Signature' }).click();
      expect(await probe.page.getByTestId('signature-trusted').textContent()).toBe('Not confirmed');
      expect(await probe.page.getByTestId('trust-source').count()).toBe(0);
      expect(probe.requests.filter((r) => r.url().startsWith(issuerOrigin))).toEqual([]);
      expect(fetched).toBe(0);
      expect(await accessibilityProblems(probe.page)).toEqual([]);

      await confirm.click();
      await expect.poll(() => probe.page.getByTestId('trust-status').textContent()).toContain(`from ${jwksUrl}`);
      await expect.poll(() => probe.page.getByTestId('signature-trusted').textContent()).toBe('Trusted');
      const source = await probe.page.getByTestId('trust-source').textContent();
      expect(source).toContain(issuerOrigin);
      expect(source).toContain(jwksUrl);
      expect(fetched).toBe(1);
      expect(probe.problems).toEqual([]);
    } finally {
      await probe.close();
    }

    // A key list the person types in is their own yes: the page reloads with it in its address and uses it.
    const typed = await openProbe(browser);
    try {
      await typed.page.goto(`${base}/app/read`);
      await typed.page.getByText('Confirm who signed: use the signer').click();
      await typed.page.getByLabel(/published keys \(JWKS address\)/).fill(jwksUrl);
      await typed.page.getByRole('button', { name: 'Use these keys' }).click();
      await typed.page.waitForURL(`${base}/app/read?jwks=${encodeURIComponent(jwksUrl)}`);
      await expect.poll(() => typed.page.getByTestId('trust-status').textContent()).toContain(`from ${jwksUrl}`);
      expect(await typed.page.getByRole('button', { name: `Fetch keys from ${issuerOrigin}` }).count()).toBe(0);
      expect(fetched).toBe(2);
      expect(typed.problems).toEqual([]);
    } finally {
      await typed.close();
    }
  }, 120_000);
});
