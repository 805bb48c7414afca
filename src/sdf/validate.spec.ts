import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildSdf, invoiceData, invoiceMeta, INVOICE_SCHEMA } from './testing/build-sdf.js';
import { validate } from './validate.js';
import { readMeta } from './read-meta.js';
import { SdfError } from './errors.js';
import { isIso4217 } from './rules/data.js';

const withMeta = (patch: Record<string, unknown>, drop: string[] = []): Buffer => {
  const meta = { ...invoiceMeta(), ...patch };
  for (const key of drop) delete meta[key];
  return buildSdf({ meta });
};

describe('validate(): F10 result shape', () => {
  it('passes a valid invoice with every check and the schema hash', async () => {
    const result = await validate(buildSdf());
    expect(result).toMatchObject({
      valid: true,
      sdf_version: '0.1',
      document_type: 'invoice',
      is_signed: false,
      checks: { container: 'pass', meta: 'pass', schema: 'pass', data: 'pass', pdf: 'pass', signature: 'skipped' },
      warnings: [],
    });
    expect(result.schema_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(result.meta?.issuer).toEqual({ name: 'Acme Supplies GmbH', id: 'DE123456789' });
    expect(result.meta?.issued_at).toBe('2026-03-15T14:30:00+01:00');
  });

  it.each(['visual.pdf', 'data.json', 'schema.json'])(
    'rejects a file without %s as SDF_ERROR_MISSING_FILE',
    async (name) => {
      const result = await validate(buildSdf({ entries: { [name]: null } }));
      expect(result.error).toMatchObject({ code: 'SDF_ERROR_MISSING_FILE', file: name });
      expect(result.checks.container).toBe('fail');
    },
  );

  it('rejects a file without meta.json as SDF_ERROR_INVALID_META', async () => {
    const result = await validate(buildSdf({ entries: { 'meta.json': null } }));
    expect(result.error?.code).toBe('SDF_ERROR_INVALID_META');
    expect(result.checks).toMatchObject({ container: 'pass', meta: 'fail', schema: 'skipped' });
  });
});

describe('meta.json (F4, F7)', () => {
  it.each([
    ['without issuer', withMeta({}, ['issuer']), '/issuer'],
    ['with a non-v4 UUID', withMeta({ document_id: 'f47ac10b-58cc-1372-a567-0e02b2c3d479' }), '/document_id'],
    ['with a date without offset', withMeta({ created_at: '2026-03-15T14:30:00' }), '/created_at'],
    ['with an impossible date', withMeta({ created_at: '2026-02-30T14:30:00Z' }), '/created_at'],
    ['without any timestamp', withMeta({}, ['created_at']), '/issued_at'],
    ['with an empty issuer name', withMeta({ issuer: { name: '' } }), '/issuer/name'],
  ])('rejects meta %s as SDF_ERROR_INVALID_META', async (_label, sdf, path) => {
    const result = await validate(sdf);
    expect(result.error?.code).toBe('SDF_ERROR_INVALID_META');
    expect(result.error?.file).toBe('meta.json');
    expect(result.error?.details.map((d) => d.path)).toContain(path);
  });

  it('accepts the service shape and normalises it', async () => {
    const meta = {
      ...invoiceMeta(),
      issuer: { name: 'Acme', id: 'X1' },
      issued_at: '2026-03-15T13:30:00Z',
      locale: 'de-DE',
    };
    delete (meta as Record<string, unknown>).created_at;
    delete (meta as Record<string, unknown>).issuer_id;
    const result = await validate(buildSdf({ meta }));
    expect(result.valid).toBe(true);
    expect(result.meta).toMatchObject({
      issuer: { name: 'Acme', id: 'X1' },
      issued_at: '2026-03-15T13:30:00Z',
      locale: 'de-DE',
    });
  });

  it('ignores unknown meta fields and keeps them', async () => {
    const result = await validate(withMeta({ tags: ['a'], future_field: 1 }));
    expect(result.valid).toBe(true);
    expect(result.meta?.future_field).toBe(1);
  });

  it('rejects sdf_version 1.0 with SDF_ERROR_UNSUPPORTED_VERSION', async () => {
    const result = await validate(withMeta({ sdf_version: '1.0' }));
    expect(result.error).toMatchObject({ code: 'SDF_ERROR_UNSUPPORTED_VERSION', file: 'meta.json' });
  });

  it('accepts sdf_version 0.9 with a warning', async () => {
    const result = await validate(withMeta({ sdf_version: '0.9' }));
    expect(result.valid).toBe(true);
    expect(result.warnings.some((w) => w.includes('0.9'))).toBe(true);
  });

  it('takes document_type from data.json when meta lacks it, and requires one somewhere', async () => {
    const fromData = await validate(withMeta({}, ['document_type']));
    expect(fromData.document_type).toBe('invoice');
    const schema = { type: 'object' };
    const none = await validate(
      buildSdf({ meta: { ...invoiceMeta(), document_type: undefined }, data: { a: 1 }, schema }),
    );
    expect(none.error?.code).toBe('SDF_ERROR_INVALID_META');
  });
});

describe('readMeta (S2 partial read)', () => {
  it('returns the normalised meta without inflating any other entry', async () => {
    // data.json is a Deflate bomb that lies about its size: inflating it would fail the read.
    const bomb = zlib.deflateRawSync(Buffer.alloc(8 * 1024 * 1024));
    const sdf = buildSdf({
      entries: { 'data.json': null, 'visual.pdf': Buffer.from('not even a pdf'), 'schema.json': Buffer.from('{') },
      extra: [{ name: 'data.json', data: Buffer.alloc(0), compressed: bomb, declaredSize: 10 }],
    });
    expect((await validate(sdf)).error?.code).toBe('SDF_ERROR_INVALID_ARCHIVE');
    const meta = await readMeta(sdf);
    expect(meta).toMatchObject({ document_id: 'f47ac10b-58cc-4372-a567-0e02b2c3d479', document_type: 'invoice' });
  });

  it('leaves document_type to validation when meta.json has none (S2: meta.json alone)', async () => {
    const sdf = withMeta({}, ['document_type']);
    expect((await readMeta(sdf)).document_type).toBeUndefined();
    expect((await validate(sdf)).document_type).toBe('invoice');
  });

  it('refuses a meta.json over 64 KiB, even one whose header claims less, and validate() agrees', async () => {
    const big = Buffer.from(JSON.stringify({ ...invoiceMeta(), notes: 'n'.repeat(5 * 1024 * 1024) }));
    const lying = buildSdf({
      entries: { 'meta.json': null },
      extra: [{ name: 'meta.json', data: big, declaredSize: 100 }],
    });
    for (const sdf of [withMeta({ notes: 'n'.repeat(70 * 1024) }), lying]) {
      await expect(readMeta(sdf)).rejects.toSatisfy(
        (e: unknown) => e instanceof SdfError && e.code === 'SDF_ERROR_INVALID_META' && e.message.includes('65536'),
      );
    }
    expect((await validate(withMeta({ notes: 'n'.repeat(70 * 1024) }))).error?.code).toBe('SDF_ERROR_INVALID_META');
    expect((await readMeta(withMeta({ notes: 'n'.repeat(60 * 1024) }))).notes).toHaveLength(60 * 1024);
  });

  it.each([
    ['not a ZIP', Buffer.from('plain text'), 'SDF_ERROR_NOT_ZIP'],
    ['no meta.json', buildSdf({ entries: { 'meta.json': null } }), 'SDF_ERROR_INVALID_META'],
    ['meta.json not JSON', buildSdf({ entries: { 'meta.json': Buffer.from('{nope') } }), 'SDF_ERROR_INVALID_META'],
  ])('throws for %s', async (_label, input, code) => {
    await expect(readMeta(input)).rejects.toSatisfy((e: unknown) => e instanceof SdfError && e.code === code);
  });
});

describe('data.json (F5) and schema.json (F6)', () => {
  const money = (amount: unknown, currency: unknown): Record<string, unknown> => ({
    ...invoiceData(),
    totals: { gross: { amount, currency } },
  });

  it.each([
    ['a reserved key', { ...invoiceData(), document_id: 'x' }, '/document_id'],
    ['a reserved _sdf key', { ...invoiceData(), _sdf: {} }, '/_sdf'],
    ['amount as a number', money(1713.6, 'EUR'), '/totals/gross/amount'],
    ['currency EURO', money('1713.60', 'EURO'), '/totals/gross/currency'],
    ['a lower-case currency', money('1713.60', 'eur'), '/totals/gross/currency'],
    [
      'a bad currency inside an array',
      {
        ...invoiceData(),
        line_items: [{ description: 'x', quantity: 1, subtotal: { amount: '1.00', currency: 'XYZ' } }],
      },
      '/line_items/0/subtotal/currency',
    ],
  ])('rejects data with %s as SDF_ERROR_INVALID_DATA', async (_label, data, path) => {
    const result = await validate(buildSdf({ data }));
    expect(result.error).toMatchObject({ code: 'SDF_ERROR_INVALID_DATA', file: 'data.json' });
    expect(result.error?.details.map((d) => d.path)).toContain(path);
  });

  it.each([
    ['checked on the parsed tree', {}],
    ['checked on the bytes before parsing', { maxJsonValues: 100 }],
  ])('refuses data.json nested deeper than the limit, %s', async (_label, limits) => {
    const nested = (levels: number): string => `${'['.repeat(levels)}1${']'.repeat(levels)}`;
    // The root object is level 1: 9 array levels inside it make 10.
    const data = (levels: number): Buffer =>
      Buffer.from(`{"document_type":"invoice","deep":${nested(levels)},"pad":"${'x'.repeat(200)}"}`);
    const tooDeep = await validate(buildSdf({ entries: { 'data.json': data(10) } }), {
      limits: { maxJsonDepth: 10, ...limits },
    });
    expect(tooDeep.error).toMatchObject({
      code: 'SDF_ERROR_INVALID_DATA',
      file: 'data.json',
      message: 'data.json nests deeper than 10 levels',
    });
    // At the limit the depth passes and the schema decides.
    const atLimit = await validate(buildSdf({ entries: { 'data.json': data(9) } }), {
      limits: { maxJsonDepth: 10, ...limits },
    });
    expect(atLimit.error?.code).toBe('SDF_ERROR_SCHEMA_MISMATCH');
  });

  it('points SDF_ERROR_SCHEMA_MISMATCH at the offending data path', async () => {
    const data = invoiceData();
    delete data.invoice_number;
    const result = await validate(buildSdf({ data }));
    expect(result.error?.code).toBe('SDF_ERROR_SCHEMA_MISMATCH');
    expect(result.error?.details[0]?.path).toBe('/invoice_number');
    const wrongType = await validate(buildSdf({ data: { ...invoiceData(), invoice_number: 42 } }));
    expect(wrongType.error?.details[0]?.path).toBe('/invoice_number');
  });

  it.each([
    [
      'an http $ref',
      { ...INVOICE_SCHEMA, properties: { ...INVOICE_SCHEMA.properties, x: { $ref: 'http://example.com/x.json' } } },
    ],
    ['a draft-07 $schema', { ...INVOICE_SCHEMA, $schema: 'http://json-schema.org/draft-07/schema#' }],
    ['an unknown format', { type: 'object', properties: { a: { type: 'string', format: 'no-such-format' } } }],
    ['an unknown keyword', { type: 'object', propertiez: {} }],
    ['a $ref to a missing local definition', { $ref: '#/$defs/nothing' }],
  ])('rejects a schema with %s as SDF_ERROR_INVALID_SCHEMA', async (_label, schema) => {
    const result = await validate(buildSdf({ schema }));
    expect(result.error).toMatchObject({ code: 'SDF_ERROR_INVALID_SCHEMA', file: 'schema.json' });
    expect(result.checks).toMatchObject({ meta: 'pass', schema: 'fail', data: 'skipped' });
  });

  it('hashes equal schemas equally whatever their formatting', async () => {
    const a = await validate(buildSdf());
    const reordered = Object.fromEntries(Object.entries(INVOICE_SCHEMA).reverse());
    const b = await validate(buildSdf({ entries: { 'schema.json': Buffer.from(JSON.stringify(reordered)) } }));
    expect(b.schema_sha256).toBe(a.schema_sha256);
  });
});

describe('schema extensions and currency codes', () => {
  it('accepts x- extension keywords anywhere in a schema, as annotations', async () => {
    const schema = {
      ...INVOICE_SCHEMA,
      'x-generator': 'erp-export 4.2',
      properties: {
        ...INVOICE_SCHEMA.properties,
        invoice_number: { type: 'string', minLength: 1, 'x-display': { label: 'Invoice no.', order: 1 } },
      },
    };
    expect(await validate(buildSdf({ schema }))).toMatchObject({ valid: true, checks: { schema: 'pass' } });
    // The extension changes nothing about validation: the data is still checked.
    const mismatch = await validate(buildSdf({ schema, data: { ...invoiceData(), invoice_number: '' } }));
    expect(mismatch.error?.code).toBe('SDF_ERROR_SCHEMA_MISMATCH');
  });

  it.each([
    ['a misspelt keyword', { type: 'object', properties: { a: { type: 'string', minLenght: 1 } } }],
    ['an unknown keyword without the x- prefix', { type: 'object', display: 'x' }],
    ['an upper-case X- prefix', { type: 'object', 'X-Display': 'x' }],
    ['an unknown format next to an extension', { type: 'string', format: 'no-such-format', 'x-a': 1 }],
  ])('still rejects %s as SDF_ERROR_INVALID_SCHEMA', async (_label, schema) => {
    const result = await validate(buildSdf({ schema }));
    expect(result.error).toMatchObject({ code: 'SDF_ERROR_INVALID_SCHEMA', file: 'schema.json' });
  });

  it.each(['EUR', 'USD', 'JPY', 'CHF', 'XAF', 'XAU', 'XCG'])('accepts the ISO 4217 code %s', (code) => {
    expect(isIso4217(code)).toBe(true);
  });

  it.each(['EURO', 'eur', 'ABC', 'HRK', 'EU', ''])('refuses %s, which is not a current ISO 4217 code', (code) => {
    expect(isIso4217(code)).toBe(false);
  });
});
