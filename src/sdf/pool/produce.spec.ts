import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SdfError } from '../errors.js';
import { INVOICE_SCHEMA, invoiceData } from '../testing/build-sdf.js';
import { invoiceWith } from '../testing/corpus.js';
import { validate } from '../validate.js';
import { createValidationPool, ProduceBudgetError } from './pool.js';

const meta = { document_type: 'invoice', issuer: 'Acme Supplies GmbH' };

describe('validation pool: producing files (rule 10) within the budget', () => {
  const pool = createValidationPool({ maxWorkers: 1, timeoutMs: 3_000, maxOldGenerationSizeMb: 256 });
  const dir = mkdtempSync(join(tmpdir(), 'sdf-produce-pool-'));
  afterAll(async () => {
    await pool.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes a valid file to a new path and says what it wrote', async () => {
    const output = join(dir, 'invoice.sdf');
    const result = await pool.produce({ data: invoiceData(), schema: INVOICE_SCHEMA, meta }, { output });
    const archive = readFileSync(output);
    expect(result).toEqual({ size: archive.length, meta: expect.objectContaining(meta) });
    expect(await validate(archive)).toMatchObject({ valid: true, document_type: 'invoice' });
  });

  it('answers the bytes when no path is given', async () => {
    const { archive } = await pool.produce({ data: invoiceData(), schema: INVOICE_SCHEMA, meta });
    expect((await validate(archive!)).valid).toBe(true);
  });

  it('refuses data that fails the schema with every error, and writes nothing', async () => {
    const output = join(dir, 'refused.sdf');
    const data = { ...invoiceData(), invoice_number: 7, totals: {} };
    const refused = pool.produce({ data, schema: INVOICE_SCHEMA, meta }, { output });
    await expect(refused).rejects.toBeInstanceOf(SdfError);
    await expect(refused).rejects.toMatchObject({
      code: 'SDF_ERROR_SCHEMA_MISMATCH',
      file: 'data.json',
      details: expect.arrayContaining([
        { path: '/invoice_number', message: 'must be string' },
        { path: '/totals/gross', message: "must have required property 'gross'" },
      ]),
    });
    expect(existsSync(output)).toBe(false);
  });

  it('refuses more values than the limits allow', async () => {
    const produced = pool.produce(
      { data: invoiceWith(2_000), schema: INVOICE_SCHEMA, meta },
      { limits: { maxJsonValues: 5_000 } },
    );
    await expect(produced).rejects.toMatchObject({ code: 'SDF_ERROR_ARCHIVE_TOO_LARGE', file: 'data.json' });
  });

  it('ends a schema that would run for ever within the time budget, and keeps serving', async () => {
    const schema = { type: 'object', properties: { code: { type: 'string', pattern: '^(a+)+$' } } };
    const data = { document_type: 'invoice', code: `${'a'.repeat(40)}!` };
    await expect(pool.produce({ data, schema, meta })).rejects.toBeInstanceOf(ProduceBudgetError);
    expect((await pool.produce({ data: invoiceData(), schema: INVOICE_SCHEMA, meta })).size).toBeGreaterThan(0);
  });
});
