import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { typicalInvoice } from '../src/sdf/testing/corpus.js';
import { startApp, type TestApp } from './helpers/app.js';
import { PASSWORD, bearer, login, registerVerified, type Account } from './helpers/accounts.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { accessibilityProblems, launchBrowser, listen, mainNavLink, openProbe, screenshot } from './helpers/browser.js';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';

const TITLE = 'Invoice INV-2026-00142';

describe('the audit log page: documents by title and linked, actors by name, actions to choose from', () => {
  let t: TestApp;
  let smtp: SmtpSink;
  let base: string;
  let browser: Browser;
  let owner: Account;
  let key: { key: string; key_prefix: string };
  let documentId: string;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await startApp({ env: { DEPLOYMENT_MODE: 'managed', SMTP_URL: smtp.url, AUTH_FAILURE_LIMIT: '100000' } });
    base = await listen(t.app);
    browser = await launchBrowser();
    owner = await registerVerified(t, smtp);
    const tokens = await login(t, owner.email);
    await t.http().patch('/v1/account/profile').set(bearer(tokens)).send({ name: 'Ada Lovelace' }).expect(200);
    key = (await t.http().post('/v1/api-keys').set(bearer(tokens)).send({ name: 'Invoice robot' }).expect(201))
      .body as typeof key;
    documentId = (await upload(t, key.key, await typicalInvoice()).expect(201)).body.id as string;
    expect((await waitForFinal(t, key.key, documentId)).body.status).toBe('valid');
    await t.http().get(`/download/${documentId}`).set('X-API-Key', key.key).expect(200);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  async function openAuditLog(page: Page): Promise<void> {
    await page.goto(`${base}/app/sign-in`);
    await page.getByLabel('Email address').fill(owner.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Documents' }).waitFor();
    await (await mainNavLink(page, 'Audit log')).click();
    await page.getByTestId('audit-row').first().waitFor();
  }

  /** How many entries of an action the organization's log holds (opening a document downloads it, too). */
  async function entriesOf(action: string): Promise<number> {
    const [{ n }] = (await t.ds.query(`SELECT count(*)::int AS n FROM audit_log WHERE tenant_id = $1 AND action = $2`, [
      owner.tenantId,
      action,
    ])) as { n: number }[];
    return n;
  }

  const rowOf = (page: Page, label: string) =>
    page.getByTestId('audit-row').filter({ has: page.getByRole('cell', { name: label, exact: false }) });

  for (const width of [1280, 375]) {
    it(`names the document, its actors and the action in words, filters by a chosen action, and links to the document, at ${width} px`, async () => {
      const probe = await openProbe(browser, { width, height: 900 });
      const { page } = probe;
      try {
        await openAuditLog(page);

        // The upload: done with the API key, named by its name and prefix; the document by its title, linked.
        const uploaded = rowOf(page, 'Document uploaded');
        expect(await uploaded.count()).toBe(1);
        await expect.poll(() => uploaded.getByTestId('audit-actor').textContent()).toBe('Invoice robot');
        expect(await uploaded.textContent()).toContain(`API key ${key.key_prefix}`);
        const link = uploaded.getByRole('link', { name: TITLE });
        expect(await link.count()).toBe(1);
        expect(await link.getAttribute('href')).toBe(`/app/documents/${documentId}`);

        // A sign-in: the person's name and address.
        const signIn = rowOf(page, 'Signed in').first();
        expect(await signIn.getByTestId('audit-actor').textContent()).toBe('Ada Lovelace');
        expect(await signIn.textContent()).toContain(owner.email.toLowerCase());
        expect(await page.getByText(`user:${owner.userId}`).count()).toBe(0);

        // Readable without sideways scrolling, and clean for assistive technology.
        // (A string: the tests are compiled without the browser's types.)
        const overflow = await page.evaluate(`(() => {
          const width = document.documentElement.clientWidth;
          const table = document.querySelector('.table-scroll');
          const filters = document.querySelector('form.filters').getBoundingClientRect().right;
          const past = (selector, right) =>
            [...document.querySelectorAll(selector)]
              .filter((e) => e.getBoundingClientRect().right > right + 0.5)
              .map((e) => e.id || e.tagName);
          return {
            page: document.documentElement.scrollWidth - width,
            table: table.scrollWidth - table.clientWidth,
            // Whatever a box might clip: nothing reaches past the window, nor past the filters' box.
            past: past('main *', width),
            pastFilters: past('form.filters *', filters),
          };
        })()`);
        expect(overflow).toEqual({ page: 0, table: 0, past: [], pastFilters: [] });
        expect(await accessibilityProblems(page)).toEqual([]);
        await screenshot(page, width === 1280 ? 'portal-audit' : 'portal-audit-narrow');

        // Choosing an action from the list filters at once.
        const choices = await page.getByLabel('Action').locator('option').allTextContents();
        expect(choices).toEqual(
          expect.arrayContaining(['Any action', 'Document uploaded', 'Document signed', 'API key created']),
        );
        await page.getByLabel('Action').selectOption({ label: 'Document downloaded' });
        const rows = page.getByTestId('audit-row');
        await expect
          .poll(async () => new Set(await rows.evaluateAll((r) => r.map((e) => e.getAttribute('data-action')))))
          .toEqual(new Set(['download']));
        expect(await rows.count()).toBe(await entriesOf('download'));
        expect(await accessibilityProblems(page)).toEqual([]);

        if (width === 1280) {
          // The CSV: the same words, then the ids.
          await page.getByLabel('Action').selectOption({ label: 'Any action' });
          await expect.poll(() => rowOf(page, 'Document uploaded').count()).toBe(1);
          const [file] = await Promise.all([
            page.waitForEvent('download'),
            page.getByRole('button', { name: 'Download CSV' }).click(),
          ]);
          const saved = join(tmpdir(), `audit-${Date.now()}.csv`);
          await file.saveAs(saved);
          const lines = readFileSync(saved, 'utf8').trim().split('\r\n');
          rmSync(saved);
          expect(lines[0]).toBe(
            'created_at,action_label,actor_name,actor_email,actor_key_prefix,document_title,action,actor,resource_id,ip_address,metadata',
          );
          const uploadLine = lines.find((l) => l.includes('"Document uploaded"'))!;
          expect(uploadLine).toContain(
            `"Document uploaded","Invoice robot","","${key.key_prefix}","${TITLE}","upload","api_key:${key.key_prefix}","${documentId}"`,
          );
          const loginLine = lines.find((l) => l.includes('"Signed in"'))!;
          expect(loginLine).toContain(
            `"Signed in","Ada Lovelace","${owner.email.toLowerCase()}","","","login","user:${owner.userId}"`,
          );
          await page.getByLabel('Action').selectOption({ label: 'Document downloaded' });
          await expect.poll(() => rows.count()).toBe(await entriesOf('download'));
        }

        // The title leads to the document's page.
        await rows.first().getByRole('link', { name: TITLE }).click();
        await page.waitForURL(`${base}/app/documents/${documentId}`);
        await page.getByRole('heading', { level: 1, name: /^Invoice/ }).waitFor();
        expect(probe.problems).toEqual([]);
      } finally {
        await probe.close();
      }
    });
  }
});
