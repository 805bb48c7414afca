import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SdfError } from '../errors.js';
import { UUID_V4 } from '../rules/meta.js';
import { INVOICE_SCHEMA, invoiceData } from '../testing/build-sdf.js';
import { validate } from '../validate.js';
import { pack } from './pack.js';

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
});
