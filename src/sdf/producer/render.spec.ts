import { execFileSync, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fontkit from '@pdf-lib/fontkit';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PDFDocument } from 'pdf-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { inspectPdf } from '../pdf/inspect.js';
import { invoiceWith } from '../testing/corpus.js';
import { pdfFonts, pdfText, pdfWords, type PdfPageWords, type PdfWord } from '../testing/pdf-text.js';
import { referenceInvoice, referenceNomination, referencePurchaseOrder } from '../testing/reference-examples.js';
import { render } from './render.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const examplesDir = join(root, 'examples');
const screenshotsDir = join(root, 'docs', 'screenshots');

/** The repository's examples/ (what `sdf pack` is shown with) and the format specification's own. */
const examples: { name: string; data: Record<string, unknown> }[] = [
  ...readdirSync(examplesDir).map((name) => ({
    name: `examples/${name}`,
    data: JSON.parse(readFileSync(join(examplesDir, name, 'data.json'), 'utf8')) as Record<string, unknown>,
  })),
  { name: 'format reference invoice', data: referenceInvoice() },
  { name: 'format reference purchase order', data: referencePurchaseOrder() },
  { name: 'format reference nomination', data: referenceNomination() },
];

const isMoney = (v: unknown): v is { amount: string; currency: string } =>
  typeof v === 'object' && v !== null && 'amount' in v && 'currency' in v;
const squash = (text: string): string => text.replace(/\s+/g, ' ').trim();

/**
 * What a reader must find for each value of data.json: the value itself. Amounts of two-decimal
 * currencies written with fewer decimals gain them ("24" EUR reads "24.00"); a VAT rate reads as the
 * percentage it is ("0.19" reads "19%").
 */
function expectedTexts(data: unknown, key = ''): string[] {
  if (isMoney(data)) {
    const [whole, fraction = ''] = data.amount.split('.');
    return [`${whole}.${fraction.padEnd(2, '0')}`, data.currency];
  }
  if (Array.isArray(data)) return data.flatMap((v) => expectedTexts(v, key));
  if (typeof data === 'object' && data !== null) {
    return Object.entries(data).flatMap(([k, v]) => expectedTexts(v, k));
  }
  if (key === 'vat_rate') return [`${Math.round(Number(data) * 10000) / 100}%`];
  // The document type is the title; null is an empty value.
  if (key === 'document_type' || data === null) return [];
  return [squash(String(data))];
}

/** Each text found after the one before it: the extracted text reads in this order. */
function expectInOrder(text: string, sequence: string[]): void {
  let at = 0;
  for (const wanted of sequence) {
    const found = text.indexOf(wanted, at);
    expect(found, `"${wanted}" after position ${at}`).toBeGreaterThanOrEqual(0);
    at = found + wanted.length;
  }
}

const money = (v: unknown): string => (isMoney(v) ? v.amount : String(v));
const items = (data: Record<string, unknown>): Record<string, unknown>[] =>
  ((data.line_items ?? data.items ?? []) as Record<string, unknown>[]).filter((i) => typeof i === 'object');

/** The order a person reads an invoice or an order in: issuer, title, addressee, each row's cells left to right, totals. */
function tradeSequence(data: Record<string, unknown>, title: string, recipientKeys: string[]): string[] {
  const issuer = (data.seller ?? data.issuer ?? (title === 'Invoice' ? data.supplier : data.buyer)) as { name: string };
  const recipient = recipientKeys.map((k) => data[k]).find((v) => v !== undefined) as { name: string };
  const rows = items(data).flatMap((item) =>
    ['line_number', 'sku', 'description', 'quantity', 'unit', 'unit_price', 'subtotal']
      .filter((k) => item[k] !== undefined)
      .map((k) => money(item[k])),
  );
  const totals = data.totals as Record<string, unknown> | undefined;
  const sums = totals
    ? ['net', 'vat', 'gross'].filter((k) => totals[k]).map((k) => money(totals[k]))
    : [money(data.total)];
  return [issuer.name, title, recipient.name, ...rows, ...sums];
}

const words = (page: PdfPageWords, pattern: RegExp): PdfWord[] => page.words.filter((w) => pattern.test(w.text));
const lineOf = (page: PdfPageWords, word: PdfWord): PdfWord[] =>
  page.words.filter((w) => Math.abs(w.yMin - word.yMin) < 1).sort((a, b) => a.xMin - b.xMin);

describe('render(): business documents laid out by document_type', () => {
  beforeAll(() => {
    if (spawnSync('sh', ['-c', 'command -v pdftotext']).status !== 0)
      execFileSync('apt-get', ['install', '-y', '-q', 'poppler-utils'], { stdio: 'ignore' });
  }, 120_000);

  for (const { name, data } of examples) {
    it(`${name}: every value of data.json in the extracted text, in reading order; the layout from the words' boxes`, async () => {
      const pdf = await render(data);
      const text = squash(pdfText(pdf));
      for (const value of expectedTexts(data)) expect(text, `${name} shows ${value}`).toContain(value);

      const type = String(data.document_type);
      let sequence: string[] = [];
      if (type === 'invoice') sequence = tradeSequence(data, 'Invoice', ['buyer', 'recipient', 'customer']);
      if (type === 'purchase_order') sequence = tradeSequence(data, 'Purchase order', ['supplier']);
      if (type === 'nomination') {
        const issuer = (data.shipper ?? data.cargo_owner) as { name: string };
        const number = String(data.nomination_id ?? data.nomination_number);
        const hourly = (data.hourly_quantities as number[] | undefined)?.flatMap((q, i) => [String(i + 1), String(q)]);
        const cargo = [data.vessel, data.port_of_loading, data.port_of_discharge, data.cargo]
          .filter((part) => part !== undefined)
          .map(
            (part) =>
              (part as { name?: string; description?: string }).name ??
              String((part as { description?: string }).description),
          );
        sequence = [issuer.name, 'Nomination', number, ...cargo, ...(hourly ?? [])];
      }
      expect(sequence.length).toBeGreaterThan(3);
      // A field's label and its value read as one line.
      const number =
        data.invoice_number ?? data.po_number ?? data.order_number ?? data.nomination_number ?? data.nomination_id;
      const label = { invoice: 'Invoice number', purchase_order: 'Order number', nomination: 'Nomination number' }[
        type
      ];
      expect(text).toContain(`${label} ${String(number)}`);
      // In poppler's reading order, as the page reads (each line left to right, top to bottom), and as
      // the text is stored, which is what copy and paste and text-layer viewers give.
      expectInOrder(text, sequence);
      expectInOrder(squash(pdfText(pdf, 'layout')), sequence);
      expectInOrder(squash(pdfText(pdf, 'raw')), sequence);
      // The one font is embedded (rule 2), and the service's own PDF checks find nothing to warn about (F8).
      expect(pdfFonts(pdf).every((f) => f.embedded)).toBe(true);
      expect(await inspectPdf(pdf)).toEqual([]);

      // The layout, from the words' boxes: inside the margins, numbered pages, amounts on one right edge
      // with the totals below the table and on that same edge.
      const pages = pdfWords(pdf);
      pages.forEach((page, p) => {
        for (const w of page.words) {
          expect(w.xMin, w.text).toBeGreaterThanOrEqual(50 - 0.5);
          expect(w.xMax, w.text).toBeLessThanOrEqual(page.width - 50 + 0.5);
          expect(w.yMin, w.text).toBeGreaterThanOrEqual(50 - 0.5);
          expect(w.yMax, w.text).toBeLessThanOrEqual(page.height);
        }
        const footer = lineOf(page, words(page, /^Page$/).at(-1)!).map((w) => w.text);
        expect(footer.slice(-4).join(' ')).toBe(`Page ${p + 1} of ${pages.length}`);
      });
      const rows = items(data);
      const last = rows[0] ? Object.keys(rows[0]).at(-1)! : undefined;
      if (last === undefined || !isMoney(rows[0]![last])) return;
      const amounts = rows.map((item) => words(pages[0]!, new RegExp(`^${money(item[last]).replace('.', '\\.')}$`)));
      const rights = amounts.map((found) => found.at(-1)!.xMax);
      expect(Math.max(...rights) - Math.min(...rights)).toBeLessThan(0.5);
      const total = words(pages[0]!, /^Total$/)[0]!;
      expect(total.yMin).toBeGreaterThan(Math.max(...amounts.map((found) => found.at(-1)!.yMax)));
      expect(Math.abs(lineOf(pages[0]!, total).at(-1)!.xMax - rights[0]!)).toBeLessThan(0.5);
    });
  }

  it('a long invoice: amounts right-aligned, header row on every page, totals below the table, Page N of M, nothing off the page', async () => {
    const data = invoiceWith(150);
    data.line_items = (data.line_items as Record<string, unknown>[]).map((item, i) => ({
      ...item,
      unit_price: { amount: `${(i % 9) + 1}.25`, currency: 'EUR' },
    }));
    const pdf = await render(data);
    const pages = pdfWords(pdf);
    expect(pages.length).toBeGreaterThan(2);

    const amountRight: number[] = [];
    const unitPriceRight: number[] = [];
    let lastRowBottom = { page: 0, y: 0 };
    pages.forEach((page, p) => {
      for (const w of page.words) {
        expect(w.xMin, `page ${p + 1}: ${w.text}`).toBeGreaterThanOrEqual(50 - 0.5);
        expect(w.xMax, `page ${p + 1}: ${w.text}`).toBeLessThanOrEqual(page.width - 50 + 0.5);
        expect(w.yMin).toBeGreaterThanOrEqual(0);
        expect(w.yMax).toBeLessThanOrEqual(page.height);
      }
      const footer = squash(
        lineOf(page, words(page, /^Page$/).at(-1)!)
          .map((w) => w.text)
          .join(' '),
      );
      expect(footer).toBe(`Invoice INV-2026-00142 Page ${p + 1} of ${pages.length}`);

      const rows = words(page, /^batch$/).map((w) => lineOf(page, w));
      if (rows.length === 0) return;
      const header = words(page, /^Description$/);
      expect(header, `page ${p + 1} repeats the header row`).toHaveLength(1);
      const headerLine = lineOf(page, header[0]!)
        .map((w) => w.text)
        .join(' ');
      expect(headerLine).toBe('Description Quantity Unit price (EUR) Amount (EUR)');
      for (const row of rows) {
        expect(row[0]!.yMin).toBeGreaterThan(header[0]!.yMax);
        amountRight.push(row.at(-1)!.xMax);
        unitPriceRight.push(row.at(-2)!.xMax);
        lastRowBottom = { page: p, y: row[0]!.yMax };
      }
    });
    expect(amountRight).toHaveLength(150);
    expect(Math.max(...amountRight) - Math.min(...amountRight)).toBeLessThan(0.5);
    expect(Math.max(...unitPriceRight) - Math.min(...unitPriceRight)).toBeLessThan(0.5);

    const totalsPage = pages.findIndex((page) => words(page, /^Total$/).length > 0);
    const total = words(pages[totalsPage]!, /^Total$/)[0]!;
    expect(totalsPage * 10_000 + total.yMin).toBeGreaterThan(lastRowBottom.page * 10_000 + lastRowBottom.y);
    const totalLine = lineOf(pages[totalsPage]!, total);
    expect(totalLine.map((w) => w.text).join(' ')).toBe('Total 1713.60 EUR');
    // The totals end on the amount column's right edge.
    expect(Math.abs(totalLine.at(-1)!.xMax - amountRight[0]!)).toBeLessThan(0.5);
  });

  it('20,000 line items make a multi-page PDF that passes the PDF checks, numbered on every page', async () => {
    const pdf = await render(invoiceWith(20_000));
    const pages = (await PDFDocument.load(pdf)).getPageCount();
    expect(pages).toBeGreaterThan(100);
    expect(await inspectPdf(pdf)).toEqual([]);
    const text = pdfText(pdf);
    expect(text.match(/Page \d+ of \d+/g)).toEqual(
      Array.from({ length: pages }, (_, i) => `Page ${i + 1} of ${pages}`),
    );
    const layout = pdfText(pdf, 'layout');
    // A page's text starts after a form feed.
    expect(layout.match(/^\f? *Description +Quantity +Amount \(EUR\) *$/gm)).toHaveLength(pages);
    expectInOrder(squash(layout), ['batch 0,', 'batch 9999,', 'batch 19999,', 'Total 1713.60 EUR']);
  }, 120_000);

  it('renders accents, German, Turkish and Cyrillic with the embedded font, and wraps long text inside the page', async () => {
    const texts = {
      german: 'Größenänderung für Straßenbahn, Übergabe',
      french: 'Crème brûlée façonnée à l’œil, déjà reçu',
      turkish: 'İstanbul Ağır Sanayi Şirketi, ığüşöç ĞÜŞİÖÇ',
      cyrillic: 'Поставка оборудования, ООО «Ромашка», счёт',
    };
    const long = `${'Lieferung gemäß Rahmenvertrag '.repeat(40)}${'X'.repeat(300)}`;
    const pdf = await render({
      document_type: 'invoice',
      invoice_number: 'RE-2026-Ä1',
      seller: { name: texts.turkish, address: texts.german },
      buyer: { name: texts.cyrillic, address: texts.french },
      line_items: [{ description: long, quantity: 1, subtotal: { amount: '1.00', currency: 'EUR' } }],
      totals: { gross: { amount: '1.00', currency: 'EUR' } },
      notes: long,
    });
    const text = squash(pdfText(pdf));
    for (const value of Object.values(texts)) expect(text).toContain(value);
    // Every character has a glyph of its own in the embedded font (none falls back to .notdef).
    const font = fontkit.create(
      readFileSync(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf')),
    );
    const missing = [...Object.values(texts).join('')].filter((c) => !font.hasGlyphForCodePoint(c.codePointAt(0)!));
    expect(missing).toEqual([]);
    expect(text.replace(/ /g, '')).toContain(long.replace(/ /g, ''));
    expect(pdfFonts(pdf)).toEqual([expect.objectContaining({ embedded: true })]);
    for (const page of pdfWords(pdf)) {
      for (const w of page.words) expect(w.xMax).toBeLessThanOrEqual(page.width - 50 + 0.5);
    }
  });

  it('lays out sparse and unusual documents of every type without losing a value', async () => {
    const sparse: Record<string, unknown>[] = [
      { document_type: 'invoice', invoice_number: 'INV-9', total: { amount: '12', currency: 'EUR' } },
      { document_type: 'invoice', seller: 'Plain Seller Ltd', buyer: 'Plain Buyer', items: ['not', 'objects'] },
      { document_type: 'purchase_order', order_number: 'PO-1', supplier: { name: 'S' }, delivery_address: 'Dock 4' },
      { document_type: 'nomination', nomination_number: 'N-1', laycan: { start: '2026-01-01', end: '2026-01-03' } },
      { document_type: 'Gas Nomination', hourly_quantities: [], notes: { text: 'not a string', urgent: true } },
      { invoice_number: 'no type', empty: {}, list: [], nothing: null, flag: false },
    ];
    for (const data of sparse) {
      const text = squash(pdfText(await render(data)));
      for (const value of expectedTexts(data)) expect(text, JSON.stringify(data)).toContain(value);
      expect(text).toMatch(/Page 1 of 1$/);
    }
  });

  it('shows VAT by rate when the items carry several rates', async () => {
    const item = (amount: string, rate: string) => ({
      description: `Item at ${rate}`,
      quantity: 1,
      vat_rate: rate,
      subtotal: { amount, currency: 'EUR' },
    });
    const text = squash(
      pdfText(
        await render({
          document_type: 'invoice',
          invoice_number: 'INV-1',
          line_items: [item('100.00', '0.19'), item('50.00', '0.07'), item('10.05', '0.19')],
          totals: {
            net: { amount: '160.05', currency: 'EUR' },
            vat: { amount: '33.91', currency: 'EUR' },
            gross: { amount: '193.96', currency: 'EUR' },
          },
        }),
      ),
    );
    expectInOrder(text, [
      'Net amount 160.05 EUR',
      'VAT 19% of 110.05 20.91 EUR',
      'VAT 7% of 50.00 3.50 EUR',
      'VAT total 33.91 EUR',
      'Total 193.96 EUR',
    ]);
  });

  it('lays out any other document type as a document: title, fields, sections and tables, not a dump', async () => {
    const pdf = await render({
      document_type: 'delivery_note',
      delivery_note_number: 'DN-77',
      shipped_on: '2026-05-02',
      carrier: { name: 'Fast Freight', tracking: 'FF123' },
      parcels: [
        { parcel_id: 'P-1', weight_kg: 12.5, content: 'Valves' },
        { parcel_id: 'P-2', weight_kg: 3, content: 'Gaskets' },
      ],
    });
    const layout = pdfText(pdf, 'layout');
    expect(layout).toMatch(/^\s*Delivery note\s*$/m);
    expect(layout).toMatch(/Delivery note number\s+DN-77/);
    expect(layout).toMatch(/Parcel ID\s+Weight kg\s+Content/);
    expect(layout).toMatch(/P-1\s+12\.5\s+Valves/);
    expect(layout).toMatch(/P-2\s+3\s+Gaskets/);
    expect(layout).toMatch(/Tracking\s+FF123/);
    expect(layout).toMatch(/Delivery note DN-77\s+Page 1 of 1/);
  });

  it('renders data nested deeper than the call stack', async () => {
    let nested: unknown = 'the innermost value';
    for (let i = 0; i < 20_000; i++) nested = { level: nested };
    const text = pdfText(await render({ document_type: 'report', nested }));
    expect(text.match(/Level/g)).toHaveLength(20_000);
    expect(text.replace(/\s+/g, '')).toContain('theinnermostvalue');
  });

  it('writes PNG pictures of the three examples and of a long invoice continued on a second page', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdf-visual-'));
    try {
      mkdirSync(screenshotsDir, { recursive: true });
      const shots: [string, Record<string, unknown>, number][] = [
        ['visual-invoice', referenceInvoice(), 1],
        ['visual-purchase-order', referencePurchaseOrder(), 1],
        ['visual-nomination', JSON.parse(readFileSync(join(examplesDir, 'nomination', 'data.json'), 'utf8')), 1],
        ['visual-invoice-continued', invoiceWith(120), 2],
      ];
      for (const [name, data, page] of shots) {
        const file = join(dir, `${name}.pdf`);
        writeFileSync(file, await render(data));
        const out = join(screenshotsDir, name);
        execFileSync('pdftoppm', [
          '-png',
          '-r',
          '80',
          '-f',
          String(page),
          '-l',
          String(page),
          '-singlefile',
          file,
          out,
        ]);
        const png = readFileSync(`${out}.png`);
        expect(png.subarray(1, 4).toString()).toBe('PNG');
        // An A4 page at 80 dpi.
        expect(png.readUInt32BE(16)).toBe(Math.ceil((595.28 / 72) * 80));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
