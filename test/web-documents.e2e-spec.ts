import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { typicalInvoice } from '../src/sdf/testing/corpus.js';
import { buildSdf, invoiceData } from '../src/sdf/testing/build-sdf.js';
import { startApp, type TestApp } from './helpers/app.js';
import { accessibilityProblems, launchBrowser, listen, mainNavLink, openProbe, screenshot } from './helpers/browser.js';
import { secretsFor, startStandIn } from './helpers/connectors.js';
import type { SapStandIn } from './helpers/sap-standin.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

const run = promisify(execFile);
const CLI = join(process.cwd(), 'dist', 'src', 'cli', 'sdf.js');

describe('the documents pages at /app/documents, self-hosted, signed in with an API key', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let dir: string;
  let invoicePath: string;
  let brokenPath: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sdf-web-docs-'));
    t = await startApp();
    base = await listen(t.app);
    browser = await launchBrowser();
    invoicePath = join(dir, 'invoice-2026-00142.sdf');
    writeFileSync(invoicePath, await typicalInvoice());
    brokenPath = join(dir, 'broken-invoice.sdf');
    writeFileSync(brokenPath, buildSdf({ data: { ...invoiceData(), invoice_number: 42 } }));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Fails the test with the page's serious accessibility findings, if any. */
  async function accessible(page: Page): Promise<void> {
    expect(await accessibilityProblems(page)).toEqual([]);
  }

  async function signIn(page: Page, tenant: TenantFixture): Promise<void> {
    await page.goto(`${base}/app/documents`);
    await page.getByRole('heading', { name: 'Sign in to continue' }).waitFor();
    await page.getByRole('main').getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('API key', { exact: true }).fill('sdf_k_not_a_real_key');
    await page.getByRole('button', { name: 'Sign in with the key' }).click();
    await page.getByRole('alert').filter({ hasText: 'not accepted' }).waitFor();
    await accessible(page);
    await page.getByLabel('API key', { exact: true }).fill(tenant.apiKey);
    await page.getByRole('button', { name: 'Sign in with the key' }).click();
    await page.getByRole('heading', { name: 'Documents' }).waitFor();
  }

  for (const width of [1280, 375]) {
    it(`upload with progress, valid, filter, open, sign, download (verified by sdf verify), delete, at ${width} px`, async () => {
      const tenant = await createTenant(t);
      const probe = await openProbe(browser, { width, height: 900 });
      const { page } = probe;
      const shot = (name: string) => (width === 1280 ? screenshot(page, name) : Promise.resolve());
      try {
        await signIn(page, tenant);
        await page.getByTestId('empty').waitFor();
        await accessible(page);

        // A slow link, so the progress bar is seen moving.
        const cdp = await probe.context.newCDPSession(page);
        await cdp.send('Network.emulateNetworkConditions', {
          offline: false,
          latency: 0,
          downloadThroughput: -1,
          uploadThroughput: 64 * 1024,
        });
        await page.setInputFiles('#upload-file', invoicePath);
        const bar = page.getByTestId('upload-progress').locator('progress');
        await bar.waitFor();
        await expect.poll(async () => Number(await bar.getAttribute('value')), { timeout: 20_000 }).toBeGreaterThan(0);
        await cdp.send('Network.emulateNetworkConditions', {
          offline: false,
          latency: 0,
          downloadThroughput: -1,
          uploadThroughput: -1,
        });
        const status = page.getByTestId('upload-status').getByTestId('status');
        await expect.poll(() => status.getAttribute('data-status'), { timeout: 30_000 }).toBe('valid');

        await page.setInputFiles('#upload-file', brokenPath);
        await expect
          .poll(() => page.getByTestId('upload-status').getByTestId('status').getAttribute('data-status'), {
            timeout: 30_000,
          })
          .toBe('invalid');
        // The reasons are shown with the code.
        await page.getByTestId('upload-status').getByText('SDF_ERROR_SCHEMA_MISMATCH').waitFor();
        const rows = page.getByTestId('document-row');
        await expect.poll(() => rows.count()).toBe(2);
        await accessible(page);

        // Filters, applied as they are chosen: status, then a type nothing has, then cleared.
        await page.getByText('Filters', { exact: true }).click();
        await page.getByLabel('Status').selectOption('valid');
        await expect.poll(() => rows.count()).toBe(1);
        await page.getByLabel('Status').selectOption('');
        await page.getByLabel('Type').fill('purchase_order');
        await page.getByText('No documents match these filters.').waitFor();
        await accessible(page);
        await page.getByRole('button', { name: 'Show all documents' }).click();
        await expect.poll(() => rows.count()).toBe(2);
        const today = new Date().toISOString().slice(0, 10);
        await page.getByLabel('Uploaded from').fill(today);
        await page.getByLabel('Uploaded until').fill(today);
        await expect.poll(() => new URL(page.url()).searchParams.get('uploaded_to')).toBe(today);
        await expect.poll(() => rows.count()).toBe(2);

        // The valid one: its page 1 and its data.
        const valid = rows.filter({ has: page.locator('[data-status="valid"]') });
        await valid.getByRole('link').click();
        await page.locator('canvas[data-page="1"]').waitFor({ timeout: 20_000 });
        await page.getByRole('heading', { level: 1, name: 'Invoice INV-2026-00142 · Acme Supplies GmbH' }).waitFor();
        // What it is, said once: in the page's head, not again above the file's parts.
        await expect.poll(() => page.getByTestId('document-summary').textContent()).toContain('Mar 15, 2026');
        expect(await page.getByTestId('document-summary').textContent()).toContain('€1,713.60');
        expect(await page.getByTestId('summary').count()).toBe(0);
        await page.getByRole('tab', { name: 'Data' }).click();
        await page.getByRole('tabpanel').getByText('Acme Supplies GmbH').first().waitFor();
        await accessible(page);

        // Sign, and see it signed.
        await page.getByRole('button', { name: 'Sign', exact: true }).click();
        const head = page.locator('.page-head').getByTestId('status');
        await expect.poll(() => head.getAttribute('data-status'), { timeout: 30_000 }).toBe('signed');
        await page.getByRole('tab', { name: 'Signature' }).click();
        await expect
          .poll(() => page.getByTestId('signature-trusted').textContent(), { timeout: 20_000 })
          .toBe('Trusted');
        await shot('document-page');
        await accessible(page);

        // Download: the bytes verify with `sdf verify` against the tenant's published keys.
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('button', { name: 'Download', exact: true }).click(),
        ]);
        const saved = join(dir, `downloaded-${width}.sdf`);
        await download.saveAs(saved);
        const verified = await run(process.execPath, [
          CLI,
          'verify',
          saved,
          '--jwks-url',
          `${base}/.well-known/sdf-keys/${tenant.slug}`,
        ]);
        expect(verified.stdout).toContain('VALID, trusted');

        // Delete, confirmed in a dialog; the list no longer has it.
        await page.getByRole('button', { name: 'Delete', exact: true }).click();
        const dialog = page.getByRole('dialog');
        await dialog.waitFor();
        await accessible(page);
        await dialog.getByRole('button', { name: 'Delete for good' }).click();
        await page.getByRole('heading', { name: 'Documents' }).waitFor();
        await expect.poll(() => rows.count()).toBe(1);
        if (width === 375) {
          expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
        }
        // The one refused request is the wrong key tried on purpose at sign-in.
        expect(probe.problems.filter((p) => !p.includes('status of 401'))).toEqual([]);
        // The key never reached a cookie or localStorage.
        expect(await probe.context.cookies()).toEqual([]);
        expect(await page.evaluate('localStorage.length')).toBe(0);
      } finally {
        await probe.close();
      }
    }, 180_000);
  }

  it('every page, empty, has no serious accessibility finding and runs under the policy with no report', async () => {
    const tenant = await createTenant(t);
    for (const width of [1280, 375]) {
      const probe = await openProbe(browser, { width });
      const { page } = probe;
      try {
        for (const [path, heading] of [
          ['/app/', 'SDF documents'],
          ['/app/read', 'Read an SDF file'],
          ['/app/sign-in', 'Sign in'],
          ['/app/no-such-page', 'Page not found'],
          ['/app/webhooks', 'Sign in to continue'],
        ]) {
          await page.goto(`${base}${path!}`);
          await page.getByRole('heading', { level: 1, name: heading! }).waitFor();
          expect([path, await accessibilityProblems(page)]).toEqual([path, []]);
          if (width === 1280 && path === '/app/') await screenshot(page, 'home');
        }
        await signIn(page, tenant);
        for (const [link, empty] of [
          ['Schemas', 'No schemas registered yet.'],
          ['Webhooks', 'No webhooks yet.'],
          ['Documents', 'No documents yet.'],
        ]) {
          // At 375 px every section stays reachable, through the header's one menu button.
          await (await mainNavLink(page, link!)).click();
          await page.getByText(empty!, { exact: false }).first().waitFor();
          expect([link, await accessibilityProblems(page)]).toEqual([link, []]);
          expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
        }
        expect(probe.problems.filter((p) => !p.includes('status of 401'))).toEqual([]);
      } finally {
        await probe.close();
      }
    }
  }, 120_000);

  it('schemas and webhooks: empty states, add, view, the secret shown once, remove', async () => {
    const tenant = await createTenant(t);
    const probe = await openProbe(browser);
    const { page } = probe;
    try {
      await signIn(page, tenant);
      await page.getByRole('link', { name: 'Schemas' }).click();
      await page.getByText('No schemas registered yet.').waitFor();
      await accessible(page);
      const schemaFile = join(dir, 'invoice-schema.json');
      writeFileSync(schemaFile, JSON.stringify({ type: 'object', properties: { invoice_number: { type: 'string' } } }));
      await page.getByLabel('Schema id').fill('Not An Id');
      await page.getByLabel('JSON Schema file').setInputFiles(schemaFile);
      await page.getByRole('button', { name: 'Add schema' }).click();
      // The service's refusal, told in words, next to the field it concerns.
      await page.locator('#schema_id-error').waitFor();
      await accessible(page);
      await page.getByLabel('Schema id').fill('invoice/v1');
      await page.getByRole('button', { name: 'Add schema' }).click();
      await page.getByRole('button', { name: 'View invoice/v1' }).click();
      await page.getByText('"invoice_number"').first().waitFor();
      await accessible(page);
      await screenshot(page, 'schemas');

      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByText('No webhooks yet.').waitFor();
      await page.getByLabel('Address').fill('http://127.0.0.1:9/sdf-events');
      await page.getByRole('button', { name: 'Add webhook' }).click();
      const secret = page.getByTestId('webhook-secret');
      await secret.waitFor();
      expect(await secret.locator('.secret').textContent()).toMatch(/^whsec_[A-Za-z0-9_-]{40,}$/);
      await accessible(page);
      await screenshot(page, 'webhooks');
      await page.getByRole('button', { name: 'I have stored it' }).click();
      expect(await secret.count()).toBe(0);
      await page.getByRole('button', { name: /^Remove/ }).click();
      await page.getByText('No webhooks yet.').waitFor();
      // Refused on purpose: the wrong key at sign-in and the schema id the service does not accept.
      expect(probe.problems.filter((p) => !/status of (401|400)/.test(p))).toEqual([]);
    } finally {
      await probe.close();
    }
  }, 120_000);

  it('connectors: added with write-only secrets, tested, and a document pushed into the ERP from its page', async () => {
    const tenant = await createTenant(t);
    const credentials = secretsFor('basic');
    const sap = (await startStandIn('SAP', credentials)) as SapStandIn;
    const probe = await openProbe(browser);
    const { page } = probe;
    try {
      await signIn(page, tenant);
      await (await mainNavLink(page, 'Connectors')).click();
      await page.getByText('No connector yet.').waitFor();
      await accessible(page);
      await page.getByLabel('Name (optional)').fill('S/4HANA test');
      await page.getByLabel('User name').fill(credentials.auth_type === 'basic' ? credentials.username : '');
      await page.getByLabel('Password').fill(credentials.auth_type === 'basic' ? credentials.password : '');
      await page.getByLabel('Address of the ERP').fill('not an address');
      await page.getByRole('button', { name: 'Add connector' }).click();
      await page.locator('#base_url-error').waitFor();
      await accessible(page);
      await page.getByLabel('Address of the ERP').fill(sap.url);
      await page.getByRole('button', { name: 'Add connector' }).click();
      await page.getByTestId('connector-row').waitFor();
      // The secret never comes back: the form is empty again and the row names no value.
      expect(await page.getByTestId('connector-row').textContent()).not.toContain('pw-');
      await page.getByRole('button', { name: 'Test the connections' }).click();
      await page.getByTestId('connectors-notice').getByText('Every active connector answered.').waitFor();
      await expect.poll(() => page.getByTestId('connector-row').getAttribute('data-health')).toBe('healthy');
      await accessible(page);
      await screenshot(page, 'connectors');

      // A valid invoice, pushed from its page; the push history shows it in the ERP.
      const uploaded = await t
        .http()
        .post('/upload')
        .set('X-API-Key', tenant.apiKey)
        .attach('file', invoicePath)
        .expect(201);
      // Through the pages: the key lives in this page's memory only, so a reload would sign out.
      await (await mainNavLink(page, 'Documents')).click();
      await page
        .locator(`a[href="/app/documents/${uploaded.body.id as string}"]`)
        .first()
        .click();
      await page.getByRole('button', { name: 'Push to S/4HANA test' }).click();
      const push = page.getByTestId('erp-push');
      await expect.poll(() => push.getAttribute('data-status'), { timeout: 30_000 }).toMatch(/succeeded|failed/);
      expect(await push.getAttribute('data-status'), (await push.textContent()) ?? '').toBe('succeeded');
      expect(sap.invoices).toHaveLength(1);
      await accessible(page);
      expect(probe.problems.filter((p) => !/status of (401|400)/.test(p))).toEqual([]);
    } finally {
      await probe.close();
      await sap.stop();
    }
  }, 120_000);

  it('serves the front end at /app/ without touching the API: redirects, caching, the page policy, JSON 404s', async () => {
    const root = await t.http().get('/').expect(302);
    expect(root.headers.location).toBe('/app/');
    const page = await t.http().get('/app/documents/some-id').expect(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.headers['cache-control']).toBe('no-cache');
    const csp = page.headers['content-security-policy'] as string;
    expect(csp).toContain("script-src 'self';");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).toContain("connect-src 'self'");
    const asset = /\/app\/assets\/index-[\w-]+\.js/.exec(page.text)![0];
    const script = await t.http().get(asset).expect(200);
    expect(script.headers['cache-control']).toMatch(/max-age=31536000.*immutable/);
    await t.http().get('/app/assets/nothing-here.js').expect(404);
    // The origin a user named for trust is added to the page's connect-src, and nothing else.
    const named = await t.http().get('/app/read?jwks=https%3A%2F%2Fissuer.example%2Fkeys.json').expect(200);
    expect(named.headers['content-security-policy']).toContain("connect-src 'self' https://issuer.example;");
    // API paths are as before: unknown ones are JSON 404s, the documents still JSON.
    const unknown = await t.http().get('/no-such-route').expect(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    await t.http().get('/openapi.json').expect(200).expect('content-type', /json/);
    await t.http().get('/sdf').expect(401);
  });
});
