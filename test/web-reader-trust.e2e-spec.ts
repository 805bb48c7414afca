import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pack } from '../src/sdf/producer/pack.js';
import { INVOICE_SCHEMA, invoiceData } from '../src/sdf/testing/build-sdf.js';
import { startApp, type TestApp } from './helpers/app.js';
import { accessibilityProblems, launchBrowser, listen, openProbe, screenshot } from './helpers/browser.js';
import { downloadFile, upload, waitForFinal } from './helpers/documents.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';

const EXAMPLES = join(process.cwd(), 'examples');

/** An example of the project (data, schema and the producer's meta input), packed as a producer does. */
async function packExample(name: string): Promise<Buffer> {
  const read = (file: string) =>
    JSON.parse(readFileSync(join(EXAMPLES, name, file), 'utf8')) as Record<string, unknown>;
  const meta = read('meta.json') as { document_type: string; issuer: string };
  const { archive } = await pack({ data: read('data.json'), schema: read('schema.json'), meta });
  return archive;
}

/**
 * The reader's verdict on who signed, said once and with the key list box in the verdict itself, the key
 * list kept in the page address, and the summary naming meta.json's issuer for every type.
 */
describe('the reader: who signed, in one place; the issuer from meta.json', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let tenant: TenantFixture;
  let dir: string;
  let signedPath: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sdf-reader-trust-'));
    t = await startApp();
    base = await listen(t.app);
    tenant = await createTenant(t);
    browser = await launchBrowser();
    const { archive } = await pack({
      data: invoiceData(),
      schema: INVOICE_SCHEMA,
      meta: { document_type: 'invoice', issuer: 'Acme Supplies GmbH', issuer_id: 'DE123456789' },
    });
    const uploaded = await upload(t, tenant.apiKey, archive).expect(201);
    await waitForFinal(t, tenant.apiKey, uploaded.body.id);
    await t.http().post(`/sign/${uploaded.body.id}`).set('X-API-Key', tenant.apiKey).expect(202);
    await waitUntil(
      async () =>
        (await t.http().get(`/sdf/${uploaded.body.id}`).set('X-API-Key', tenant.apiKey)).body.status === 'signed',
      'signed',
      30_000,
    );
    signedPath = join(dir, 'signed-invoice.sdf');
    writeFileSync(signedPath, await downloadFile(t, tenant.apiKey, uploaded.body.id));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(page: Page, path: string): Promise<void> {
    await page.setInputFiles('#sdf-file', path);
    await page.getByTestId('reader-result').waitFor({ timeout: 30_000 });
  }

  for (const width of [1280, 375]) {
    it(`a signed file whose key is not confirmed says so once, with the key list box in the verdict; "Use these keys" makes it trusted and keeps ?jwks= (${width} px)`, async () => {
      const probe = await openProbe(browser, { width });
      const { page } = probe;
      try {
        await page.goto(`${base}/app/read`);
        await open(page, signedPath);
        const verdict = page.getByTestId('verdict');
        const signer = verdict.getByTestId('signer');
        await signer.waitFor();
        // One message, in the verdict: no "Passed" for the signature beside a warning that says otherwise.
        expect(await verdict.getAttribute('data-signer')).toBe('unconfirmed');
        expect(await page.getByText("Signed; the signer's key is not confirmed yet.").count()).toBe(1);
        expect(await verdict.getByTestId('warning').count()).toBe(0);
        expect(await page.getByText('which is not a trusted key').count()).toBe(0);
        const check = verdict.getByTestId('check-signature');
        expect(await check.textContent()).toContain('Matches; key not confirmed');
        expect(await check.textContent()).not.toContain('Passed');
        // The box that fixes it is right there, inside the verdict, above the document.
        const field = signer.getByLabel(/published keys \(JWKS address\)/);
        await field.waitFor();
        expect(await page.getByLabel(/published keys \(JWKS address\)/).count()).toBe(1);
        const boxTop = (await field.boundingBox())!.y;
        const tabsTop = (await page.getByRole('tablist', { name: 'Parts of the file' }).boundingBox())!.y;
        expect(boxTop).toBeLessThan(tabsTop);
        expect(await accessibilityProblems(page)).toEqual([]);
        await screenshot(page, width === 1280 ? 'reader-key-not-confirmed' : 'reader-key-not-confirmed-phone');

        // The service's own key list, typed in: the verdict turns to trusted and the address keeps the list.
        const jwks = `${base}/.well-known/sdf-keys/${tenant.slug}`;
        await field.fill(jwks);
        await signer.getByRole('button', { name: 'Use these keys' }).click();
        await expect.poll(() => verdict.getAttribute('data-signer'), { timeout: 30_000 }).toBe('trusted');
        const trusted = verdict.getByTestId('signer');
        expect(await trusted.textContent()).toContain("Signed; the signer's key is trusted.");
        expect(await trusted.getByTestId('trust-source').textContent()).toContain(jwks);
        expect(await verdict.getByTestId('check-signature').textContent()).toContain('Passed; key trusted');
        expect(await page.getByText('not confirmed yet').count()).toBe(0);
        expect(new URL(page.url()).searchParams.getAll('jwks')).toEqual([jwks]);
        await page.getByRole('tab', { name: 'Signature' }).click();
        expect(await page.getByTestId('signature-trusted').textContent()).toBe('Trusted');
        expect(await accessibilityProblems(page)).toEqual([]);
        await screenshot(page, width === 1280 ? 'reader-key-trusted' : 'reader-key-trusted-phone');

        // The address as kept opens the page with the same list (as any link naming a list, after a yes),
        // and the file is trusted again.
        await page.reload();
        await page.getByRole('button', { name: `Fetch keys from ${base}` }).click();
        await expect.poll(() => page.getByTestId('trust-status').textContent()).toContain(`from ${jwks}`);
        await open(page, signedPath);
        await expect.poll(() => page.getByTestId('verdict').getAttribute('data-signer')).toBe('trusted');
        if (width === 375) expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
        expect(probe.problems).toEqual([]);
      } finally {
        await probe.close();
      }
    }, 120_000);
  }

  it('the tabs stay on one line at 375 px and scroll; the arrow keys move along them', async () => {
    const probe = await openProbe(browser, { width: 375 });
    const { page } = probe;
    try {
      await page.goto(`${base}/app/read`);
      await open(page, signedPath);
      const tablist = page.getByRole('tablist', { name: 'Parts of the file' });
      const tabs = await tablist.getByRole('tab').all();
      expect(tabs).toHaveLength(5);
      const tops = await Promise.all(tabs.map(async (tab) => Math.round((await tab.boundingBox())!.y)));
      expect(new Set(tops).size).toBe(1);
      // The row is wider than the phone: it scrolls inside itself, the page does not.
      const [scroll, client] = (await tablist.evaluate((el) => [el.scrollWidth, el.clientWidth])) as [number, number];
      expect(scroll).toBeGreaterThan(client);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      await page.getByRole('tab', { name: 'Document' }).focus();
      for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowRight');
      // The page answers each key press when it gets to it (a busy machine may take a moment): ask until then.
      const files = page.getByRole('tab', { name: 'Files' });
      await expect.poll(() => files.getAttribute('aria-selected')).toBe('true');
      await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe('tab-files');
      // The focused tab was scrolled into sight within the row.
      const rightEdges = async () => {
        const row = (await tablist.boundingBox())!;
        const box = (await files.boundingBox())!;
        return box.x + box.width - (row.x + row.width);
      };
      await expect.poll(rightEdges).toBeLessThanOrEqual(1);
      await expect.poll(() => page.getByRole('tabpanel', { name: 'Files' }).isVisible()).toBe(true);
      await page.keyboard.press('ArrowRight');
      const documentTab = page.getByRole('tab', { name: 'Document' });
      await expect.poll(() => documentTab.getAttribute('aria-selected')).toBe('true');
      // Back at the first tab, the row shows it whole once it has come to rest: the arrow key does not also
      // scroll the row by the browser's own step after the focus has moved (ten still frames in a row).
      await tablist.evaluate(
        (el) =>
          new Promise<void>((resolve) => {
            const window = globalThis as unknown as { requestAnimationFrame(callback: () => void): number };
            let last = el.scrollLeft;
            let still = 0;
            const frame = () => {
              still = el.scrollLeft === last ? still + 1 : 0;
              last = el.scrollLeft;
              if (still >= 10) resolve();
              else window.requestAnimationFrame(frame);
            };
            window.requestAnimationFrame(frame);
          }),
      );
      const row = (await tablist.boundingBox())!;
      const first = (await documentTab.boundingBox())!;
      expect(first.x).toBeGreaterThanOrEqual(row.x - 1);
      expect(first.x + first.width).toBeLessThanOrEqual(row.x + row.width + 1);
      // The page, left while it was hidden behind another tab, is drawn for the width it is shown at: at 100 %
      // it fits the phone; zoomed in, it scrolls sideways from its left edge rather than being cut off there.
      const pages = page.getByRole('document', { name: 'Visual layer' });
      const frame = pages.locator('.pdf-frame').first();
      await expect.poll(() => page.getByText('1 of 1 page drawn').count(), { timeout: 20_000 }).toBe(1);
      const box = (await pages.boundingBox())!;
      const fitted = (await frame.boundingBox())!;
      expect(fitted.x).toBeGreaterThanOrEqual(box.x);
      expect(fitted.x + fitted.width).toBeLessThanOrEqual(box.x + box.width);
      await page.getByRole('button', { name: 'Zoom in' }).click();
      await page.getByRole('button', { name: 'Zoom in' }).click();
      await expect.poll(() => page.getByText('150 %').count()).toBe(1);
      await expect.poll(async () => (await frame.boundingBox())?.width ?? 0).toBeGreaterThan(fitted.width * 1.4);
      await expect.poll(() => page.getByText('1 of 1 page drawn').count(), { timeout: 20_000 }).toBe(1);
      expect(await pages.evaluate((el) => el.scrollLeft)).toBe(0);
      expect((await frame.boundingBox())!.x).toBeGreaterThanOrEqual(box.x);
      await page.getByRole('button', { name: 'Fit width' }).click();
      await expect.poll(async () => (await frame.boundingBox())?.width ?? 0).toBeLessThanOrEqual(box.width);
      expect(await accessibilityProblems(page)).toEqual([]);
      await screenshot(page, 'reader-tabs-phone');
      expect(probe.problems).toEqual([]);
    } finally {
      await probe.close();
    }
  }, 120_000);

  it("a purchase order and a nomination name meta.json's issuer in the summary, not a party of data.json", async () => {
    const cases = [
      { name: 'purchase-order', issuer: 'Globex Ltd', other: 'Acme GmbH', number: 'Purchase order' },
      { name: 'nomination', issuer: 'Acme Energy Trading GmbH', other: null, number: 'Nomination' },
    ];
    const probe = await openProbe(browser);
    const { page } = probe;
    try {
      await page.goto(`${base}/app/read`);
      for (const example of cases) {
        const meta = JSON.parse(readFileSync(join(EXAMPLES, example.name, 'meta.json'), 'utf8')) as { issuer: string };
        expect(meta.issuer).toBe(example.issuer);
        const path = join(dir, `${example.name}.sdf`);
        writeFileSync(path, await packExample(example.name));
        await page.setInputFiles('#sdf-file', path);
        await page
          .locator(`[data-testid="reader-result"][data-file="${example.name}.sdf"]`)
          .waitFor({ timeout: 30_000 });
        const summary = page.getByTestId('summary');
        await summary.waitFor();
        const facts = await summary
          .locator('div')
          .evaluateAll((rows) =>
            rows.map((row) => [row.querySelector('dt')?.textContent, row.querySelector('dd')?.textContent]),
          );
        expect(facts).toContainEqual(['From', example.issuer]);
        expect(facts.find(([label]) => label === 'Document')?.[1]).toMatch(new RegExp(`^${example.number} `));
        // The supplier (the order's other party) is named as such, never as the sender.
        if (example.other) expect(facts).toContainEqual(['To', example.other]);
        if (example.name === 'purchase-order') {
          await page.getByText(/of \d+ pages? drawn/).waitFor({ timeout: 20_000 });
          await screenshot(page, 'reader-purchase-order-summary');
        }
      }
      expect(await accessibilityProblems(page)).toEqual([]);
      expect(probe.problems).toEqual([]);
    } finally {
      await probe.close();
    }
  }, 120_000);
});
