import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { accessibilityProblems, launchBrowser, listen, mainNavLink, openProbe, screenshot } from './helpers/browser.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

/** The acceptance bound: the page answers a click within this many milliseconds throughout. */
const ANSWER_MS = 200;

const MB = 1024 * 1024;
const SCHEMA = {
  type: 'object',
  required: ['document_type'],
  properties: { document_type: { type: 'string' }, note: { type: 'string' } },
};

interface Fixture {
  label: string;
  file: string;
  archive: Buffer;
  /** The file's own id (meta.json), by which the documents list names it, and the stored record's id. */
  documentId: string;
  recordId: string;
  /** The long string in `note`, if any. */
  note?: string;
  keys?: number;
}

/**
 * Starts a timer loop in the page that records the longest gap between its ticks (a frozen main thread
 * stops it), and the longest wait of a click for its handler.
 */
async function watchMainThread(page: Page): Promise<void> {
  await page.evaluate(`(() => {
    if (window.__watch) clearInterval(window.__watch.timer);
    const watch = { gap: 0, click: 0, last: performance.now() };
    watch.timer = setInterval(() => {
      const now = performance.now();
      watch.gap = Math.max(watch.gap, now - watch.last);
      watch.last = now;
    }, 10);
    document.addEventListener('click', (event) => {
      watch.click = Math.max(watch.click, performance.now() - event.timeStamp);
    }, { capture: true });
    window.__watch = watch;
  })()`);
}

async function longestWait(page: Page): Promise<{ gap: number; click: number }> {
  return (await page.evaluate(
    `(() => { const w = window.__watch; clearInterval(w.timer); return { gap: Math.round(w.gap), click: Math.round(w.click) }; })()`,
  )) as { gap: number; click: number };
}

describe('the data view stays responsive whatever data.json holds, in the reader and on a document page', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let tenant: TenantFixture;
  let dir: string;
  const fixtures: Fixture[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sdf-data-view-'));
    t = await startApp();
    base = await listen(t.app);
    // Room for the polls while a 40 MB value is validated, and for the pages' own requests.
    tenant = await createTenant(t, { rate_limit_rpm: 100_000 });
    browser = await launchBrowser();
    // 1 MB without a space: random letters and digits, so it does not compress away.
    const million = randomBytes(MB).toString('base64url').slice(0, MB);
    // 40 MB in a file of about 40 KB: a repeated pattern deflates about a thousand to one.
    const forty = '0123456789abcdef'.repeat((40 * MB) / 16);
    const keys = Object.fromEntries(
      Array.from({ length: 200_000 }, (_, i) => [`field_${String(i).padStart(6, '0')}`, `value ${i}`]),
    );
    const made: [string, Record<string, unknown>, Fixture['note'] | undefined, number | undefined][] = [
      ['1 MB string', { document_type: 'statement', note: million }, million, undefined],
      ['40 MB string', { document_type: 'statement', note: forty }, forty, undefined],
      ['200,000 keys', { document_type: 'statement', ...keys }, undefined, 200_001],
    ];
    for (const [label, data, note, keyCount] of made) {
      const { archive, documentId } = await buildSdf({ documentType: 'statement', data, schema: SCHEMA });
      const file = join(dir, `${label.replace(/[^a-z0-9]+/gi, '-')}.sdf`);
      writeFileSync(file, archive);
      fixtures.push({ label, file, archive, documentId, recordId: '', note, keys: keyCount });
    }
    // The 40 MB string travels in a small file: the format core's limits (50 MB an entry) let it through.
    expect(fixtures[1]!.archive.length).toBeLessThan(100 * 1024);
    for (const fixture of fixtures) {
      const uploaded = await upload(t, tenant.apiKey, fixture.archive).expect(201);
      const final = await waitForFinal(t, tenant.apiKey, uploaded.body.id as string, 60_000);
      expect([fixture.label, final.body.status]).toEqual([fixture.label, 'valid']);
      fixture.recordId = uploaded.body.id as string;
    }
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * On the page as it stands (the file opened, the Data tab chosen): the value is cut, more of it and
   * all of it on request, and the page answered every tick and click within the bound meanwhile.
   */
  /** Saves the download a click starts and returns its text. */
  async function downloaded(page: Page, click: () => Promise<void>): Promise<string> {
    const [download] = await Promise.all([page.waitForEvent('download'), click()]);
    const path = join(dir, `download-${Date.now()}`);
    await download.saveAs(path);
    return readFileSync(path, 'utf8');
  }

  /**
   * On the page as it stands (the file opened, the Data tab chosen): the value is cut, more of it and
   * all of it on request, and the page answered every tick and click within the bound meanwhile.
   */
  async function checkDataTab(page: Page, fixture: Fixture, shot: string | null): Promise<void> {
    const panel = page.getByRole('tabpanel', { name: 'Data' });
    /** The whole value, as the page handed it over: on the clipboard, or in a downloaded file. */
    let whole: () => Promise<string>;
    if (fixture.note) {
      const shown = new Intl.NumberFormat('en-US').format(fixture.note.length);
      await panel.getByText(`(500 of ${shown} characters shown)`).waitFor({ timeout: 30_000 });
      expect(await panel.locator('.cut-text').textContent()).toBe(`${fixture.note.slice(0, 500)}…`);
      await panel.getByRole('button', { name: 'Show more of Note' }).click();
      await panel.getByText(`(5,500 of ${shown} characters shown)`).waitFor();
      expect(await panel.locator('.cut-text').textContent()).toBe(`${fixture.note.slice(0, 5500)}…`);
      if (fixture.note.length <= 2_000_000) {
        await panel.getByRole('button', { name: 'Copy the whole value of Note' }).click();
        await panel.getByRole('status').getByText(`Copied all ${shown} characters.`).waitFor({ timeout: 30_000 });
        whole = () => page.evaluate('navigator.clipboard.readText()') as Promise<string>;
      } else {
        // Too long for the clipboard without holding the page up: the whole value comes as a file.
        await panel.getByText('Too long to copy from here.').waitFor();
        expect(await panel.getByRole('button', { name: 'Copy the whole value of Note' }).count()).toBe(0);
        const text = await downloaded(page, () =>
          panel.getByRole('button', { name: 'Download the whole value of Note' }).click(),
        );
        whole = () => Promise.resolve(text);
      }
    } else {
      await panel.getByText('Showing 100 of 200,001 fields.').waitFor({ timeout: 30_000 });
      // document_type, then the first 99 of the others.
      await panel.getByText('value 98', { exact: true }).waitFor();
      expect(await panel.getByText('value 99', { exact: true }).count()).toBe(0);
      await panel.getByRole('button', { name: 'Show 200 more of Data' }).click();
      await panel.getByText('Showing 300 of 200,001 fields.').waitFor();
      await panel.getByText('value 298', { exact: true }).waitFor();
      expect(await panel.getByText('value 299', { exact: true }).count()).toBe(0);
      await panel.getByText('Show the data as JSON').click();
      await panel.getByText(/^The first 20,000 of [\d,]+ characters are shown\.$/).waitFor({ timeout: 30_000 });
      const text = await downloaded(page, () => panel.getByRole('button', { name: 'Download the JSON' }).click());
      whole = () => Promise.resolve(text);
    }
    const waited = await longestWait(page);
    expect(waited.gap, `${fixture.label}: the longest the page did not answer, ms`).toBeLessThan(ANSWER_MS);
    expect(waited.click, `${fixture.label}: the longest a click waited, ms`).toBeLessThan(ANSWER_MS);
    // Read back after the measured stretch: the whole value, not its shown start.
    const value = await whole();
    if (fixture.note)
      expect([fixture.label, value.length, value === fixture.note]).toEqual([fixture.label, fixture.note.length, true]);
    else expect(Object.keys(JSON.parse(value) as object)).toHaveLength(fixture.keys!);
    if (shot) await screenshot(page, shot);
    expect(await accessibilityProblems(page)).toEqual([]);
    const width = page.viewportSize()!.width;
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
  }

  for (const width of [1280, 375]) {
    it(`the reader opens each file and its Data tab without freezing, at ${width} px`, async () => {
      const probe = await openProbe(browser, { width, height: 900 });
      const { page } = probe;
      await probe.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      try {
        for (const fixture of fixtures) {
          await page.goto(`${base}/app/read`);
          await page.getByRole('heading', { name: 'Read an SDF file' }).waitFor();
          await watchMainThread(page);
          await page.getByLabel('Choose a file').setInputFiles(fixture.file);
          const verdict = page.getByTestId('verdict');
          await verdict.waitFor({ timeout: 30_000 });
          expect([fixture.label, await verdict.getAttribute('data-valid')]).toEqual([fixture.label, 'true']);
          await page.getByRole('tab', { name: 'Data' }).click();
          const shot = width === 1280 && fixture.label === '1 MB string' ? 'reader-data-long-value' : null;
          await checkDataTab(page, fixture, shot);
        }
        expect(probe.problems).toEqual([]);
      } finally {
        await probe.close();
      }
    }, 300_000);
  }

  for (const width of [1280, 375]) {
    it(`a stored document's page shows each file's Data tab without freezing, at ${width} px`, async () => {
      const probe = await openProbe(browser, { width, height: 900 });
      const { page } = probe;
      await probe.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      try {
        await page.goto(`${base}/app/sign-in`);
        await page.getByLabel('API key', { exact: true }).fill(tenant.apiKey);
        await page.getByRole('button', { name: 'Sign in with the key' }).click();
        await (await mainNavLink(page, 'Documents')).click();
        for (const fixture of fixtures) {
          // Through the links: the key lives in this page's memory only.
          await (await mainNavLink(page, 'Documents')).click();
          await page.getByRole('heading', { name: 'Documents' }).waitFor();
          await watchMainThread(page);
          // A statement has no business number to be named by: its row is found by the service's id.
          await page.locator(`a[href="/app/documents/${fixture.recordId}"]`).click();
          const verdict = page.getByTestId('verdict');
          await verdict.waitFor({ timeout: 30_000 });
          await page.getByRole('tab', { name: 'Data' }).click();
          const shot = width === 1280 && fixture.label === '200,000 keys' ? 'document-data-many-keys' : null;
          await checkDataTab(page, fixture, shot);
        }
        expect(probe.problems).toEqual([]);
      } finally {
        await probe.close();
      }
    }, 300_000);
  }
});
