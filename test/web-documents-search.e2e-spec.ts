import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pack } from '../src/sdf/index.js';
import {
  referenceInvoice,
  referenceNomination,
  referencePurchaseOrder,
} from '../src/sdf/testing/reference-examples.js';
import { startApp, type TestApp } from './helpers/app.js';
import { accessibilityProblems, launchBrowser, listen, openProbe, screenshot } from './helpers/browser.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

const example = (type: string, file: string) =>
  JSON.parse(readFileSync(join(process.cwd(), 'examples', type, file), 'utf8')) as Record<string, unknown>;
const SCHEMA = { type: 'object', required: ['document_type'], properties: { document_type: { type: 'string' } } };

interface Stored {
  id: string;
  /** meta.json's document_id */
  fileId: string;
  number: string;
}

describe('finding documents in the pages: search as you type, filters in the address, titles and references', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let tenant: TenantFixture;
  const stored: Record<string, Stored> = {};

  /** Packs and uploads one document, waits for its verdict, and keeps its ids. */
  async function store(name: string, data: Record<string, unknown>, meta: { document_type: string; issuer: string }) {
    const { archive, meta: written } = await pack({ data, schema: SCHEMA, meta });
    const res = await upload(t, tenant.apiKey, archive).expect(201);
    const final = await waitForFinal(t, tenant.apiKey, res.body.id as string);
    expect(final.body.status).toBe('valid');
    stored[name] = { id: res.body.id as string, fileId: written.document_id!, number: final.body.summary.number };
  }

  beforeAll(async () => {
    t = await startApp();
    base = await listen(t.app);
    browser = await launchBrowser();
    // Uploads waited for by polling, then pages typed into twice over: past the default 60 a minute.
    tenant = await createTenant(t, { rate_limit_rpm: 5000 });
    // The format's examples: an invoice naming an order, that order, a cargo nomination; and the
    // repository's own invoice and order, with a second invoice in dollars.
    await store(
      'invoice',
      { ...referenceInvoice(), order_ref: 'PO-2026-00388' },
      { document_type: 'invoice', issuer: 'Acme Supplies GmbH' },
    );
    await store('order', referencePurchaseOrder(), {
      document_type: 'purchase_order',
      issuer: 'Global Logistics AG',
    });
    await store('nomination', referenceNomination(), {
      document_type: 'nomination',
      issuer: 'Nordic Energy Trading AS',
    });
    const globexOrder = example('purchase-order', 'data.json');
    await store('globex-order', globexOrder, { document_type: 'purchase_order', issuer: 'Globex Ltd' });
    await store(
      'globex-invoice',
      { ...example('invoice', 'data.json'), invoice_number: 'INV-2026-00157' },
      { document_type: 'invoice', issuer: 'Acme GmbH' },
    );
    const dollars = (amount: string) => ({ amount, currency: 'USD' });
    await store(
      'initech-invoice',
      {
        ...example('invoice', 'data.json'),
        invoice_number: 'INV-2026-00163',
        order_ref: undefined,
        issue_date: '2026-03-20',
        due_date: '2026-04-19',
        buyer: { name: 'Initech Inc', vat_id: 'US12-3456789', address: '4120 Freidrich Lane, Austin' },
        line_items: [{ description: 'Valve service', quantity: 1, subtotal: dollars('823.53') }],
        totals: { net: dollars('823.53'), vat: dollars('156.47'), gross: dollars('980.00') },
      },
      { document_type: 'invoice', issuer: 'Acme GmbH' },
    );
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function accessible(page: Page): Promise<void> {
    expect(await accessibilityProblems(page)).toEqual([]);
  }

  /** Signs in with the tenant's key, kept for the tab so a reload stays signed in. */
  async function signIn(page: Page, path = '/app/documents'): Promise<void> {
    await page.goto(`${base}${path}`);
    await page.getByRole('main').getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('API key', { exact: true }).fill(tenant.apiKey);
    await page.getByLabel('Keep me signed in while this tab is open').check();
    await page.getByRole('button', { name: 'Sign in with the key' }).click();
    await page.getByRole('heading', { level: 1, name: 'Documents' }).waitFor();
  }

  const numbersShown = (page: Page) =>
    page.getByTestId('document-row').evaluateAll((rows) => rows.map((r) => r.querySelector('a')?.textContent));

  async function search(page: Page, text: string): Promise<void> {
    const box = page.getByRole('searchbox', { name: 'Search documents' });
    await box.clear();
    // Typed key by key, as a person would: the list answers once the typing pauses.
    await box.pressSequentially(text);
  }

  for (const width of [1280, 375]) {
    it(`a person finds an invoice by its number and by a name, the search in the address, at ${width} px`, async () => {
      const probe = await openProbe(browser, { width, height: 900 });
      const { page } = probe;
      const shot = (name: string) => screenshot(page, width === 1280 ? name : `${name}-narrow`);
      try {
        await signIn(page);
        const rows = page.getByTestId('document-row');
        await expect.poll(() => rows.count()).toBe(6);
        await accessible(page);
        if (width === 375) {
          expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
            await page.evaluate('innerWidth'),
          );
        }
        await shot('documents-list');

        // The row says what the document is: number, counterparty, amount by its currency, dates, status, type.
        const invoiceRow = rows.filter({ hasText: 'INV-2026-00142' });
        const text = await invoiceRow.textContent();
        expect(text).toContain('Global Logistics AG');
        expect(text).toContain('€1,713.60');
        expect(text).toContain('Mar 15, 2026');
        expect(text).toContain('Apr 15, 2026');
        expect(text).toContain('Valid');
        expect(text).toContain('Invoice');
        expect(await rows.filter({ hasText: 'INV-2026-00163' }).textContent()).toContain('$980.00');
        // One id for a document: the service's, in the address; meta.json's nowhere in the list.
        expect(await invoiceRow.getByRole('link').getAttribute('href')).toBe(`/app/documents/${stored.invoice!.id}`);
        const listText = (await page.getByRole('main').textContent()) ?? '';
        for (const doc of Object.values(stored)) {
          expect(listText).not.toContain(doc.fileId);
          expect(listText).not.toContain(doc.id);
        }

        // The number: exactly the invoice, and the address carries the search.
        await search(page, 'INV-2026-00142');
        await expect.poll(() => numbersShown(page)).toEqual(['INV-2026-00142']);
        await expect.poll(() => new URL(page.url()).searchParams.get('q')).toBe('INV-2026-00142');
        await accessible(page);

        // A reload keeps the search: the box and the list.
        await page.reload();
        await page.getByRole('heading', { level: 1, name: 'Documents' }).waitFor();
        await expect.poll(() => numbersShown(page)).toEqual(['INV-2026-00142']);
        expect(await page.getByRole('searchbox', { name: 'Search documents' }).inputValue()).toBe('INV-2026-00142');

        // A name: every document of Acme, the invoice among them.
        await search(page, 'Acme');
        await expect.poll(() => new URL(page.url()).searchParams.get('q')).toBe('Acme');
        await expect
          .poll(async () => [...((await numbersShown(page)) as string[])].sort())
          .toEqual(['INV-2026-00142', 'INV-2026-00157', 'INV-2026-00163', 'PO-2026-00388', 'PO-2026-0815']);

        // Nothing found: said so with the words searched, and a way back to everything.
        await search(page, 'Zzyzx & "quoted" \\ (x)');
        const empty = page.getByTestId('empty');
        await empty.getByText('No documents match “Zzyzx & "quoted" \\ (x)”.').waitFor();
        await accessible(page);
        await empty.getByRole('button', { name: 'Show all documents' }).click();
        await expect.poll(() => rows.count()).toBe(6);
        await expect.poll(() => new URL(page.url()).search).toBe('');
        expect(await page.getByRole('searchbox', { name: 'Search documents' }).inputValue()).toBe('');

        // The filters, by keyboard: counterparty, an amount range (asks for its currency), ordered by amount.
        await page.getByText('Filters', { exact: true }).focus();
        await page.keyboard.press('Enter');
        await page.getByLabel('Counterparty').fill('Glob');
        await expect
          .poll(async () => [...((await numbersShown(page)) as string[])].sort())
          .toEqual(['INV-2026-00142', 'INV-2026-00157']);
        await page.getByLabel('Amount at least').fill('1000');
        await page.getByRole('alert').getByText('Choose a currency to filter by amount.').waitFor();
        await page.getByLabel('Currency').selectOption('EUR');
        await page.getByLabel('Counterparty').fill('');
        await page.getByLabel('Order').selectOption({ label: 'Amount, lowest first' });
        // Equal totals in upload order.
        await expect
          .poll(() => numbersShown(page))
          .toEqual(['PO-2026-0815', 'INV-2026-00142', 'PO-2026-00388', 'INV-2026-00157']);
        await page.getByLabel('Due from').fill('2026-04-01');
        await page.getByLabel('Due until').fill('2026-04-14');
        await expect.poll(() => numbersShown(page)).toEqual(['INV-2026-00157']);
        const params = new URL(page.url()).searchParams;
        expect(Object.fromEntries(params)).toEqual({
          amount_min: '1000',
          currency: 'EUR',
          due_from: '2026-04-01',
          due_to: '2026-04-14',
          sort: 'amount:asc',
        });
        await accessible(page);
        if (width === 1280) await shot('documents-filters');

        // The address is the search: opened afresh (as a bookmark or a shared link), it shows the same.
        const shared = page.url();
        await page.goto(`${base}/app/documents`);
        await page.getByRole('heading', { level: 1, name: 'Documents' }).waitFor();
        await expect.poll(() => rows.count()).toBe(6);
        await page.goto(shared);
        await expect.poll(() => numbersShown(page)).toEqual(['INV-2026-00157']);
        expect(await page.getByLabel('Due until').inputValue()).toBe('2026-04-14');

        // Open a document and go back: the search is still there.
        await rows.getByRole('link', { name: 'INV-2026-00157' }).click();
        await page.getByRole('heading', { level: 1, name: 'Invoice INV-2026-00157 · Acme GmbH' }).waitFor();
        await page.goBack();
        await expect.poll(() => numbersShown(page)).toEqual(['INV-2026-00157']);
        expect(await page.getByLabel('Currency').inputValue()).toBe('EUR');

        if (width === 375) {
          expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
            await page.evaluate('innerWidth'),
          );
        }
        expect(probe.problems).toEqual([]);
      } finally {
        await probe.close();
      }
    }, 180_000);
  }

  it('a document page is headed by its title, names its issuer from meta.json, links its references, keeps the ids under Details', async () => {
    for (const width of [1280, 375]) {
      const probe = await openProbe(browser, { width, height: 900 });
      const { page } = probe;
      try {
        await signIn(page);
        await search(page, 'INV-2026-00142');
        await page.getByTestId('document-row').getByRole('link', { name: 'INV-2026-00142' }).click();
        await page
          .getByRole('heading', { level: 1, name: 'Invoice INV-2026-00142 · Acme Supplies GmbH', exact: true })
          .waitFor();
        const summary = page.getByTestId('document-summary');
        expect(await summary.textContent()).toContain('Global Logistics AG');
        // Once the stored file is open: the page's text and attributes, but for Details, hold no id.
        await page.locator('canvas[data-page="1"]').waitFor({ timeout: 20_000 });
        const outside = (await page.evaluate(`(() => {
          const main = document.querySelector('main').cloneNode(true);
          main.querySelector('[role=tabpanel]#panel-details').remove();
          return main.outerHTML;
        })()`)) as string;
        expect(outside).toContain('INV-2026-00142');
        expect(outside).not.toContain(stored.invoice!.id);
        expect(outside).not.toContain(stored.invoice!.fileId);
        // Details: both ids, each named for what it is.
        await page.getByRole('tab', { name: 'Details' }).click();
        const details = page.getByRole('tabpanel');
        expect(await fieldValue(details, 'Service id')).toBe(stored.invoice!.id);
        expect(await fieldValue(details, 'Document id in the file')).toBe(stored.invoice!.fileId);
        await accessible(page);
        if (width === 375) {
          expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
            await page.evaluate('innerWidth'),
          );
          // The heading wraps between words, never inside the number (an inline box broken over two lines
          // has two rectangles).
          const number = page.getByRole('heading', { level: 1 }).getByText('INV-2026-00142', { exact: true });
          expect(await number.evaluate((el) => el.getClientRects().length)).toBe(1);
          expect(
            await page.getByRole('heading', { level: 1 }).evaluate((el) => el.getClientRects()[0]!.height),
          ).toBeGreaterThan(1.5 * (await number.evaluate((el) => el.getBoundingClientRect().height)));
        }
        await screenshot(page, width === 1280 ? 'document-page-summary' : 'document-page-narrow');

        // The order it names: one document has that number, so the link opens it.
        await expect
          .poll(() => summary.getByTestId('reference-link').getAttribute('href'))
          .toBe(`/app/documents/${stored.order!.id}`);
        await summary.getByTestId('reference-link').click();
        await page
          .getByRole('heading', { level: 1, name: 'Purchase order PO-2026-00388 · Global Logistics AG', exact: true })
          .waitFor();
        // Issued by meta.json's issuer; the supplier (data.json) is the other party, not the issuer.
        const orderSummary = page.getByTestId('document-summary');
        expect(await fieldValue(orderSummary, 'Issued by')).toBe('Global Logistics AG');
        expect(await fieldValue(orderSummary, 'Supplier')).toBe('Acme Supplies GmbH');
        // And back the other way: the invoices naming this order.
        await orderSummary.getByRole('link', { name: 'Invoice INV-2026-00142' }).waitFor();
        await accessible(page);

        // A nomination: its issuer from meta.json; its contract, no document here, is searched for in the list.
        await page.goto(`${base}/app/documents/${stored.nomination!.id}`);
        await page
          .getByRole('heading', { level: 1, name: 'Nomination NOM-2026-0042 · Nordic Energy Trading AS', exact: true })
          .waitFor();
        const nomination = page.getByTestId('document-summary');
        expect(await fieldValue(nomination, 'Issued by')).toBe('Nordic Energy Trading AS');
        expect(await fieldValue(nomination, 'Counterparty')).toBe('Baltic Ship Agents Ltd');
        const contract = nomination.getByTestId('reference-link');
        await expect.poll(() => contract.getAttribute('href')).toBe('/app/documents?q=CT-2025-NE-0017');
        await contract.click();
        // No contract is stored here: the list searched for it holds the one document that names it.
        await expect.poll(() => numbersShown(page)).toEqual(['NOM-2026-0042']);
        expect(await page.getByRole('searchbox', { name: 'Search documents' }).inputValue()).toBe('CT-2025-NE-0017');
        await accessible(page);
        expect(probe.problems).toEqual([]);
      } finally {
        await probe.close();
      }
    }
  }, 180_000);
});

/** The value shown beside a label in a document's summary. */
async function fieldValue(summary: Locator, label: string): Promise<string | null> {
  return summary
    .locator('div', { has: summary.page().getByText(label, { exact: true }) })
    .locator('dd')
    .textContent();
}
