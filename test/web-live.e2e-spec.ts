import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page, Request, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErpPushProcessor } from '../src/connectors/jobs/erp-push.processor.js';
import { SignSdfProcessor } from '../src/signing/jobs/sign-sdf.processor.js';
import { ValidateSdfProcessor } from '../src/documents/jobs/validate-sdf.processor.js';
import { typicalInvoice } from '../src/sdf/testing/corpus.js';
import { startApp, type TestApp } from './helpers/app.js';
import { PASSWORD, mailTo, uniqueEmail } from './helpers/accounts.js';
import { accessibilityProblems, launchBrowser, listen, openProbe, type PageProbe } from './helpers/browser.js';
import { configureBody, secretsFor, startStandIn, validInvoice } from './helpers/connectors.js';
import type { ErpStandIn } from './helpers/erp-standin.js';
import { closedPort } from './helpers/saml-idp.js';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';
import { createTenant } from './helpers/tenants.js';

/** A person's pace: one step every two seconds (the journey is about rates, so the pace is the point). */
const STEP_MS = 2000;
const pace = (page: Page) => page.waitForTimeout(STEP_MS);

const linkIn = (mail: { text: string }) => /https?:\/\/\S+/.exec(mail.text)![0];
/** What a page reads again while it waits: a document's record, and its ERP pushes. */
const DOCUMENT_READS = /^\/sdf\/[0-9a-f-]{36}(?:\/erp-status)?$/;

/** What the page asked of the service, with the event stream's connections and when each was open. */
class NetworkLog {
  readonly answers: { method: string; path: string; status: number }[] = [];
  /** GET /sdf/{id} and GET /sdf/{id}/erp-status: a document's record and its pushes, by path, in order. */
  readonly records: { path: string; at: number }[] = [];
  readonly streams: { request: Request; openedAt?: number; closedAt?: number; status?: number }[] = [];

  constructor(probe: PageProbe) {
    const { context } = probe;
    context.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname === '/events') this.streams.push({ request });
      if (request.method() === 'GET' && DOCUMENT_READS.test(url.pathname)) {
        this.records.push({ path: url.pathname, at: Date.now() });
      }
    });
    context.on('response', (response: Response) => {
      const request = response.request();
      const url = new URL(request.url());
      this.answers.push({ method: request.method(), path: url.pathname, status: response.status() });
      const stream = this.streams.find((s) => s.request === request);
      if (stream) {
        stream.status = response.status();
        if (response.ok()) stream.openedAt = Date.now();
      }
    });
    const closed = (request: Request) => {
      const stream = this.streams.find((s) => s.request === request);
      if (stream) stream.closedAt = Date.now();
    };
    context.on('requestfinished', closed);
    context.on('requestfailed', closed);
  }

  /** The streams open now. */
  openStreams() {
    return this.streams.filter((s) => s.openedAt !== undefined && s.closedAt === undefined);
  }

  recordsOf(path: string, from: number, to = Date.now()) {
    return this.records.filter((r) => r.path === path && r.at >= from && r.at <= to);
  }
}

/**
 * Needs the service's event stream (`GET /events`): the pages follow it and poll only while it cannot
 * open, so this file passes only where the stream is served.
 */
describe('the portal at a person’s pace on Free: no 429, and no polling while the event stream is open', () => {
  let t: TestApp;
  let smtp: SmtpSink;
  let base: string;
  let browser: Browser;
  let dir: string;
  let invoicePath: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sdf-web-live-'));
    invoicePath = join(dir, 'invoice-2026-00142.sdf');
    writeFileSync(invoicePath, await typicalInvoice());
    smtp = await startSmtpSink();
    const port = await closedPort();
    base = `http://127.0.0.1:${port}`;
    // Free's 20 requests a minute over a real minute: the window is the plan's own, not shortened.
    t = await startApp({ env: { DEPLOYMENT_MODE: 'managed', PUBLIC_BASE_URL: base, SMTP_URL: smtp.url } });
    await t.app.listen(port, '127.0.0.1');
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sign-up, key, upload, document, sign, team, audit and plan, a step every two seconds, at 1280 px', async () => {
    const probe = await openProbe(browser, { width: 1280 });
    const { page } = probe;
    const log = new NetworkLog(probe);
    const nav = page.getByRole('navigation', { name: 'Main' });
    const validation = t.app.get(ValidateSdfProcessor, { strict: false }).worker;
    const signing = t.app.get(SignSdfProcessor, { strict: false }).worker;
    const email = uniqueEmail('person');
    try {
      // Sign up.
      await page.goto(`${base}/`);
      await pace(page);
      await page.getByRole('main').getByRole('link', { name: 'Create an organisation' }).click();
      await pace(page);
      await page.getByLabel('Organisation name').fill(`Live ${Date.now().toString(36)}`);
      await page.getByLabel('Your name').fill('Ada Lovelace');
      await page.getByLabel('Your email address').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await pace(page);
      await page.getByRole('button', { name: 'Create the organisation' }).click();
      await page.getByTestId('signed-up').waitFor();
      await pace(page);
      await page.goto(linkIn(await mailTo(smtp, email)));
      await expect.poll(() => page.getByTestId('verify-state').getAttribute('data-state')).toBe('verified');
      await pace(page);

      // Sign in.
      await page.goto(`${base}/app/sign-in`);
      await page.getByLabel('Email address').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await pace(page);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Documents' }).waitFor();
      await pace(page);

      // An API key.
      await nav.getByRole('link', { name: 'API keys' }).click();
      await pace(page);
      await page.getByLabel('Name').fill('ERP integration');
      await pace(page);
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByTestId('raw-key').waitFor();
      await pace(page);
      await page.getByRole('button', { name: 'I have stored it' }).click();
      await pace(page);

      // Upload, while validation is held: the panel waits on the stream, not by asking again.
      await nav.getByRole('link', { name: 'Documents' }).click();
      await pace(page);
      await expect.poll(() => log.openStreams().length).toBe(1);
      await validation.pause();
      await page.setInputFiles('#upload-file', invoicePath);
      const uploaded = page.getByTestId('upload-status').getByTestId('status');
      await expect.poll(() => uploaded.getAttribute('data-status')).toBe('pending');
      const record = log.records.at(-1)!.path;
      const heldFrom = Date.now();
      for (let i = 0; i < 3; i++) await pace(page);
      expect(await uploaded.getAttribute('data-status')).toBe('pending');
      expect(log.recordsOf(record, heldFrom)).toEqual([]);
      void validation.resume();
      // The verdict arrives as an event: the record is read once more, and the status shows it.
      await expect.poll(() => uploaded.getAttribute('data-status'), { timeout: 60_000 }).toBe('valid');
      expect(log.recordsOf(record, heldFrom)).toHaveLength(1);
      await pace(page);

      // The document page; sign it, while signing is held: again no polling, then the event.
      await page.getByTestId('document-row').getByRole('link').first().click();
      await page.locator('canvas[data-page="1"]').waitFor({ timeout: 60_000 });
      await pace(page);
      await signing.pause();
      await page.getByRole('button', { name: 'Sign', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'Signing the document…' }).waitFor();
      const signFrom = Date.now();
      // Three steps: a failed signing has its event too, so nothing is read while the signing is held.
      for (let i = 0; i < 3; i++) await pace(page);
      const whileHeld = log.recordsOf(record, signFrom);
      // At most the one read the click itself asks for (the record after the sign request was accepted).
      expect(whileHeld.length).toBeLessThanOrEqual(1);
      const heldUntil = Date.now();
      void signing.resume();
      const head = page.locator('.page-head').getByTestId('status');
      await expect.poll(() => head.getAttribute('data-status'), { timeout: 30_000 }).toBe('signed');
      expect(log.recordsOf(record, heldUntil)).toHaveLength(1);
      expect(await accessibilityProblems(page)).toEqual([]);
      await pace(page);

      // Team: an invitation.
      await nav.getByRole('link', { name: 'Team' }).click();
      await pace(page);
      await page.getByLabel('Email address').fill(uniqueEmail('member'));
      await pace(page);
      await page.getByRole('button', { name: 'Send invitation' }).click();
      await page.getByTestId('invitation-row').waitFor();
      await pace(page);

      // The audit log, then the plan: still Free.
      await nav.getByRole('link', { name: 'Audit log' }).click();
      await page.locator('tbody tr').first().waitFor();
      await pace(page);
      await nav.getByRole('link', { name: 'Plan' }).click();
      await page.locator('[data-testid="plan-row"][data-plan="free"][aria-current="true"]').waitFor();
      await pace(page);

      // No request of the journey met a 429, and the tab held one stream at a time.
      expect(log.answers.filter((a) => a.status === 429)).toEqual([]);
      expect(log.streams.filter((s) => s.status === 200).length).toBeGreaterThanOrEqual(1);
      const opened = log.streams.filter((s) => s.openedAt !== undefined);
      for (const [i, s] of opened.entries()) {
        for (const other of opened.slice(i + 1)) {
          const overlap = other.openedAt! < (s.closedAt ?? Infinity) && s.openedAt! < (other.closedAt ?? Infinity);
          expect(overlap, 'two streams open at once in one tab').toBe(false);
        }
      }
      expect(probe.problems).toEqual([]);
    } finally {
      // A worker left paused by a failed step would hold every later job of the file.
      void validation.resume();
      void signing.resume();
      await probe.close();
    }
  }, 300_000);
});

/**
 * The document page's ERP pushes and signing state follow the stream too (document.erp_pushed,
 * document.signing_failed, document.signed): nothing is polled while the stream is open, and the event
 * brings the push's result and a failed signing's reason onto the page.
 */
describe('the document page follows ERP pushes and signing failures on the event stream, self-hosted', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let sap: ErpStandIn;

  beforeAll(async () => {
    t = await startApp();
    base = await listen(t.app);
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await sap?.stop();
    await t?.close();
  });

  it('a push held in the queue, then its result; a signing refused, then its reason; no polling meanwhile', async () => {
    const tenant = await createTenant(t);
    const credentials = secretsFor('basic');
    sap = await startStandIn('SAP', credentials);
    await t
      .http()
      .post('/connectors/configure')
      .set('X-API-Key', tenant.apiKey)
      .send({ ...configureBody('SAP', sap, credentials), name: 'S/4HANA test' })
      .expect(201);
    const id = await validInvoice(t, tenant.apiKey);
    const record = `/sdf/${id}`;
    const pushes = `/sdf/${id}/erp-status`;

    const probe = await openProbe(browser, { width: 1280 });
    const { page } = probe;
    const log = new NetworkLog(probe);
    const pushing = t.app.get(ErpPushProcessor, { strict: false }).worker;
    const signing = t.app.get(SignSdfProcessor, { strict: false }).worker;
    try {
      await page.goto(`${base}/app/documents`);
      await page.getByRole('main').getByRole('link', { name: 'Sign in' }).click();
      await page.getByLabel('API key', { exact: true }).fill(tenant.apiKey);
      await page.getByRole('button', { name: 'Sign in with the key' }).click();
      await page.getByRole('heading', { name: 'Documents' }).waitFor();
      // Through the pages: the key lives in this page's memory only, so a reload would sign out.
      await page.getByTestId('document-row').getByRole('link').first().click();
      const erp = page.getByRole('region', { name: 'ERP' });
      await erp.getByRole('button', { name: 'Push to S/4HANA test' }).waitFor();
      await expect.poll(() => log.openStreams().length).toBe(1);

      // The push waits in the queue: the panel shows it waiting and does not ask again.
      await pushing.pause();
      await erp.getByRole('button', { name: 'Push to S/4HANA test' }).click();
      const push = erp.getByRole('listitem');
      await push.filter({ hasText: 'Waiting' }).waitFor();
      const pushFrom = Date.now();
      for (let i = 0; i < 3; i++) await pace(page);
      expect(log.recordsOf(pushes, pushFrom)).toEqual([]);
      expect(await push.textContent()).toContain('Waiting');
      const pushHeldUntil = Date.now();
      void pushing.resume();
      // document.erp_pushed: the pushes are read once more, and the result shows with the ERP's reference.
      await push.filter({ hasText: 'In the ERP' }).waitFor({ timeout: 30_000 });
      const [{ erp_document_id: erpId }] = (await t.ds.query(
        `SELECT erp_document_id FROM erp_pushes WHERE document_id = $1`,
        [id],
      )) as { erp_document_id: string }[];
      expect(erpId).toEqual(expect.any(String));
      expect(await push.textContent()).toContain(`ERP id ${erpId}`);
      expect(log.recordsOf(pushes, pushHeldUntil)).toHaveLength(1);
      expect(log.recordsOf(record, pushFrom)).toEqual([]);
      expect(await accessibilityProblems(page)).toEqual([]);

      // A signing asked for while the tenant has a key, refused by the job once the key is gone.
      await signing.pause();
      await page.getByRole('button', { name: 'Sign', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'Signing the document…' }).waitFor();
      await t.ds.query(`UPDATE signing_keys SET is_active = false WHERE tenant_id = $1`, [tenant.id]);
      const signFrom = Date.now();
      for (let i = 0; i < 3; i++) await pace(page);
      // At most the one read the click itself asks for (the record after the sign request was accepted).
      expect(log.recordsOf(record, signFrom).length).toBeLessThanOrEqual(1);
      const signHeldUntil = Date.now();
      void signing.resume();
      // document.signing_failed: the record is read once more, and the page says why.
      const failure = page.getByRole('alert').filter({ hasText: 'Signing failed' });
      await failure.waitFor({ timeout: 30_000 });
      expect(await failure.textContent()).toBe(
        'Signing failed: The tenant has no active signing key; create one with POST /admin/tenants/:tenantId/signing-keys',
      );
      expect(log.recordsOf(record, signHeldUntil)).toHaveLength(1);
      expect(await page.getByRole('status').filter({ hasText: 'Signing the document…' }).count()).toBe(0);
      await expect.poll(() => page.getByRole('button', { name: 'Sign', exact: true }).isEnabled()).toBe(true);
      expect(await accessibilityProblems(page)).toEqual([]);
      expect(log.openStreams()).toHaveLength(1);
      expect(probe.problems).toEqual([]);
    } finally {
      void pushing.resume();
      void signing.resume();
      await probe.close();
    }
  }, 180_000);
});
