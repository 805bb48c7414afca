import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SdfError } from '../errors.js';
import { UUID_V4 } from '../rules/meta.js';
import { INVOICE_SCHEMA, invoiceData } from '../testing/build-sdf.js';
import { validate } from '../validate.js';
import { pack } from './pack.js';
import { GlyphCache, embedFont, render, wrap } from './render.js';

const hasCommand = (name: string): boolean => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;

describe('producer pack() and render()', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sdf-pack-'));
  beforeAll(() => {
    // Rule 11 is checked with the real tools; poppler-utils comes from the distribution when absent.
    if (!hasCommand('pdftotext'))
      execFileSync('apt-get', ['install', '-y', '-q', 'poppler-utils'], { stdio: 'ignore' });
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const meta = {
    document_type: 'invoice',
    issuer: 'Acme Supplies GmbH',
    issuer_id: 'DE123456789',
    schema_id: 'invoice/v1',
  };

  it('packs a valid invoice that plain unzip opens and whose PDF shows the invoice number', async () => {
    const { archive, meta: written } = await pack({ data: invoiceData(), schema: INVOICE_SCHEMA, meta });
    expect(written.document_id).toMatch(UUID_V4);
    expect(written.sdf_version).toBe('0.1');
    expect(written.created_at).toMatch(/[+-]\d{2}:\d{2}$/);
    const result = await validate(archive);
    expect(result).toMatchObject({ valid: true, warnings: [] });

    const file = join(dir, 'invoice.sdf');
    writeFileSync(file, archive);
    execFileSync('unzip', ['-o', '-q', file, '-d', join(dir, 'out')]);
    const text = execFileSync('pdftotext', [join(dir, 'out', 'visual.pdf'), '-']).toString();
    expect(text).toContain('INV-2026-00142');
    expect(text).toContain('1713.60 EUR');
  });

  it('gives each file its own document_id', async () => {
    const a = await pack({ data: invoiceData(), schema: INVOICE_SCHEMA, meta });
    const b = await pack({ data: invoiceData(), schema: INVOICE_SCHEMA, meta });
    expect(a.meta.document_id).not.toBe(b.meta.document_id);
  });

  it('never writes data that fails the schema', async () => {
    const data = { ...invoiceData(), invoice_number: '' };
    await expect(pack({ data, schema: INVOICE_SCHEMA, meta })).rejects.toSatisfy(
      (e: unknown) => e instanceof SdfError && e.code === 'SDF_ERROR_SCHEMA_MISMATCH',
    );
  });

  it('packs a nomination built like the reference example', async () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      required: ['document_type', 'nomination_number', 'vessel', 'freight'],
      properties: {
        document_type: { const: 'nomination' },
        nomination_number: { type: 'string' },
        vessel: {
          type: 'object',
          properties: { imo: { type: 'string', pattern: '^\\d{7}$' }, eta: { type: 'string', format: 'date-time' } },
        },
        freight: {
          type: 'object',
          properties: {
            rate: { type: 'object', properties: { amount: { type: 'string' }, currency: { type: 'string' } } },
          },
        },
      },
    };
    const data = {
      document_type: 'nomination',
      nomination_number: 'NOM-2026-0042',
      vessel: { name: 'MV Nordic Star', imo: '9876543', eta: '2026-03-22T06:00:00+02:00' },
      freight: { rate: { amount: '8.50', currency: 'USD' }, terms: 'CFR Rotterdam' },
    };
    const { archive } = await pack({
      data,
      schema,
      meta: { document_type: 'nomination', issuer: 'Nordic Energy Trading AS' },
    });
    expect(await validate(archive)).toMatchObject({ valid: true, document_type: 'nomination' });
  });

  const pdfText = (pdf: Buffer, name: string): string => {
    const file = join(dir, name);
    writeFileSync(file, pdf);
    return execFileSync('pdftotext', [file, '-']).toString();
  };

  it('renders every item of a long invoice, page after page, in order', async () => {
    const data = invoiceData();
    data.line_items = Array.from({ length: 400 }, (_, i) => ({
      description: `Valve ${i + 1}`,
      quantity: 1,
      subtotal: { amount: `${i + 1}.00`, currency: 'EUR' },
    }));
    const pdf = await render(data);
    expect((await PDFDocument.load(pdf)).getPageCount()).toBeGreaterThan(5);
    const text = pdfText(pdf, 'long.pdf');
    const positions = [1, 200, 400].map((n) => text.indexOf(`Valve ${n}\n`));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(text).toContain('400.00');
    expect(text.indexOf('1713.60 EUR')).toBeGreaterThan(positions[2]!);
    expect(await validate((await pack({ data, schema: INVOICE_SCHEMA, meta, pdf })).archive)).toMatchObject({
      valid: true,
      warnings: [],
    });
  });

  it('cuts a word wider than the page and keeps every character of it', async () => {
    const pdf = await render({ ...invoiceData(), notes: `${'X'.repeat(500)} end` });
    const text = pdfText(pdf, 'word.pdf');
    expect(text.match(/X/g)).toHaveLength(500);
    expect(text).toMatch(/^X+$/m);
    expect(text).toContain('Notes');
  });

  it('keeps ligatures apart and text in scripts it shapes, such as Arabic', async () => {
    const text = pdfText(await render({ ...invoiceData(), notes: 'office fluid', greeting: 'مرحبا' }), 'text.pdf');
    expect(text).toContain('office fluid');
    expect(text).toMatch(/Greeting\s+\S+/);
  });

  it('codes text one character at a time exactly as shaping the whole text does', async () => {
    const font = await embedFont(await PDFDocument.create());
    const glyphs = new GlyphCache(font);
    const ranges: [number, number][] = [
      [0x20, 0x7e],
      [0xa0, 0x2af],
      [0x370, 0x4ff],
      [0x2000, 0x206f],
      [0x20a0, 0x20cf],
    ];
    const all = ranges.flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, i) => from + i));
    const text = `office ffi fl ${String.fromCodePoint(...all)}`;
    expect(glyphs.encode(text)).toBe(font.encodeText(text).asString());
    expect(glyphs.width(text, 10)).toBeCloseTo(font.widthOfTextAtSize(text, 10), 6);
    // Tone letters (U+02E5-U+02E9) change shape by their neighbours, so they are shaped as a whole.
    const tones = 'a \u02e5\u02e9\u02e5';
    expect(glyphs.encode(tones)).toBe(font.encodeText(tones).asString());
  });

  it('wraps text within the width, breaking only long words between characters', () => {
    const measure = (s: string): number => s.length; // one unit a character
    expect(wrap('the quick brown fox', 10, measure)).toEqual(['the quick', 'brown fox']);
    expect(wrap('a abcdefghijklmnopqrstuvw b', 10, measure)).toEqual(['a', 'abcdefghij', 'klmnopqrst', 'uvw b']);
    expect(wrap('  spaced \t out\n', 20, measure)).toEqual(['spaced out']);
    expect(wrap('', 10, measure)).toEqual([]);
  });
});
