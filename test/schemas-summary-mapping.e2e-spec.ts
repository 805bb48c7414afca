import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SummaryBackfill } from '../src/documents/jobs/summary-backfill.js';
import { buildSdf, invoiceMeta } from '../src/sdf/testing/build-sdf.js';
import { startApp, type TestApp } from './helpers/app.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

/** A document type no built-in mapping knows, with its fields where nobody would guess them. */
const FREIGHT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['document_type', 'bill'],
  properties: {
    document_type: { type: 'string' },
    bill: {
      type: 'object',
      required: ['no'],
      properties: { no: { type: 'string' }, date: { type: 'string' } },
    },
  },
};

const freightData = (no: unknown = 'FB-2026-0077') => ({
  document_type: 'freight_bill',
  bill: { no, date: '2026-05-04' },
  carrier_id: 'CARRIER-1',
  shipper: { name: 'Nordwind Spedition GmbH' },
  charges: { total: '2480.50', currency: 'CHF' },
  payment: { due: '2026-06-03' },
  orders: ['PO-2026-0815', 'PO-2026-0816'],
});

const MAPPING = {
  label: 'Freight bill',
  number: ['/bill/no'],
  counterparty: ['/consignee', '/shipper'],
  amount: ['/charges/total'],
  currency: ['/charges/currency'],
  issue_date: ['/bill/date'],
  due_date: ['/payment/due'],
  references: ['/orders'],
};

const MAPPED = {
  title: 'Freight bill FB-2026-0077',
  number: 'FB-2026-0077',
  issuer: 'Acme Supplies GmbH',
  counterparty: 'Nordwind Spedition GmbH',
  amount: '2480.50',
  currency: 'CHF',
  issue_date: '2026-05-04',
  due_date: '2026-06-03',
  references: ['PO-2026-0815', 'PO-2026-0816'],
};

const freightMeta = (schemaId = 'freight-bill/v1') => ({
  ...invoiceMeta(),
  document_id: randomUUID(),
  document_type: 'freight_bill',
  schema_id: schemaId,
});

describe("a tenant's summary mapping registered with a schema", () => {
  let t: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  const register = (tenant: TenantFixture, body: Record<string, unknown>) =>
    t
      .http()
      .post('/schemas')
      .set('X-API-Key', tenant.apiKey)
      .send({ version: '1', schema: FREIGHT_SCHEMA, ...body });
  const validate = (tenant: TenantFixture, archive: Buffer) =>
    t
      .http()
      .post('/validate')
      .set('X-API-Key', tenant.apiKey)
      .attach('file', archive, { filename: 'x.sdf', contentType: 'application/octet-stream' });

  beforeAll(async () => {
    // The backfill is driven by hand below (an hour between its passes).
    t = await startApp({ env: { SUMMARY_BACKFILL_INTERVAL_MS: '3600000' } });
    a = await createTenant(t, { rate_limit_rpm: 100_000 });
    b = await createTenant(t, { rate_limit_rpm: 100_000 });
  }, 60_000);
  afterAll(() => t?.close());

  it('is checked when registered: every problem a 400 naming its field', async () => {
    const cases: [unknown, string][] = [
      [{ ...MAPPING, totl: ['/total'] }, '/summary_mapping/totl'],
      [{ number: ['bill/no'] }, '/summary_mapping/number/0'],
      [{ number: ['/bill/no', '/a~2b'] }, '/summary_mapping/number/1'],
      [{ number: ['/ok', ''] }, '/summary_mapping/number/1'],
      [{ number: '/bill/no' }, '/summary_mapping/number'],
      [{ number: [] }, '/summary_mapping/number'],
      [{ number: Array.from({ length: 9 }, (_, i) => `/n${i}`) }, '/summary_mapping/number'],
      [{ number: [`/${'x'.repeat(200)}`] }, '/summary_mapping/number/0'],
      [{ number: [`${'/x'.repeat(17)}`] }, '/summary_mapping/number/0'],
      [{ number: [42] }, '/summary_mapping/number/0'],
      [{ number: ['/a\u0000b'] }, '/summary_mapping/number/0'],
      [{ label: 'x'.repeat(61) }, '/summary_mapping/label'],
      [{ label: '' }, '/summary_mapping/label'],
      [{}, '/summary_mapping'],
      [['/bill/no'], '/summary_mapping'],
      ['/bill/no', '/summary_mapping'],
    ];
    for (const [summary_mapping, path] of cases) {
      const res = await register(a, { schema_id: 'freight-bill/v9', summary_mapping });
      expect(res.status, JSON.stringify(summary_mapping).slice(0, 80)).toBe(400);
      expect(
        (res.body.error.details as { path: string }[]).map((d) => d.path),
        JSON.stringify(summary_mapping).slice(0, 80),
      ).toContain(path);
    }
    // Nothing was registered by any of them.
    const list = await t.http().get('/schemas').set('X-API-Key', a.apiKey).expect(200);
    expect(list.body.schemas).toEqual([]);
  });

  it('is stored with the schema, listed, and summarizes the documents made against that schema', async () => {
    const created = await register(a, { schema_id: 'freight-bill/v1', summary_mapping: MAPPING }).expect(201);
    expect(created.body.summary_mapping).toEqual(MAPPING);
    // The same content under an id with no mapping: its documents get the generic summary.
    await register(a, { schema_id: 'freight-bill/v2' }).expect(201);
    const list = await t.http().get('/schemas').set('X-API-Key', a.apiKey).expect(200);
    expect(list.body.schemas).toEqual([
      expect.objectContaining({ schema_id: 'freight-bill/v2', summary_mapping: null }),
      expect.objectContaining({ schema_id: 'freight-bill/v1', summary_mapping: MAPPING }),
    ]);

    const archive = (meta = freightMeta(), schema: unknown = FREIGHT_SCHEMA) =>
      buildSdf({ meta, data: freightData(), schema });
    const mapped = await upload(t, a.apiKey, archive()).expect(201);
    // Another schema content under the registered id, another id, another tenant: no mapping applies.
    const otherContent = await upload(
      t,
      a.apiKey,
      archive(freightMeta(), { ...FREIGHT_SCHEMA, description: 'a local copy, edited' }),
    ).expect(201);
    const otherId = await upload(t, a.apiKey, archive(freightMeta('freight-bill/v2'))).expect(201);
    const otherTenant = await upload(t, b.apiKey, archive()).expect(201);

    const final = await waitForFinal(t, a.apiKey, mapped.body.id as string);
    expect(final.body.status).toBe('valid');
    expect(final.body.validation.registry_match).toBe(true);
    expect(final.body.summary).toEqual(MAPPED);
    // The generic fallback: the first identifier-like top-level string, no amount or dates it cannot find.
    const generic = {
      title: 'Freight bill CARRIER-1',
      number: 'CARRIER-1',
      issuer: 'Acme Supplies GmbH',
      counterparty: null,
      amount: null,
      currency: null,
      issue_date: null,
      due_date: null,
      references: [],
    };
    const unmapped = [
      [otherContent, a, false],
      [otherId, a, true],
      [otherTenant, b, null],
    ] as const;
    for (const [res, tenant, match] of unmapped) {
      const judged = await waitForFinal(t, tenant.apiKey, res.body.id as string);
      expect(judged.body.status).toBe('valid');
      expect(judged.body.validation.registry_match).toBe(match);
      expect(judged.body.summary).toEqual(generic);
    }

    // Searched by what the mapping found.
    const found = await t.http().get('/list?q=FB-2026-0077').set('X-API-Key', a.apiKey).expect(200);
    expect(found.body.documents.map((d: { id: string }) => d.id)).toEqual([mapped.body.id]);
    const byRef = await t.http().get('/list?references=PO-2026-0816').set('X-API-Key', a.apiKey).expect(200);
    expect(byRef.body.documents.map((d: { id: string }) => d.id)).toEqual([mapped.body.id]);
    const byAmount = await t
      .http()
      .get('/list?amount_min=2000&amount_max=3000&currency=CHF')
      .set('X-API-Key', a.apiKey)
      .expect(200);
    expect(byAmount.body.documents.map((d: { id: string }) => d.id)).toEqual([mapped.body.id]);

    // An invalid file whose data.json parses still gets the mapped summary; one whose data.json does not, none.
    const invalid = await upload(
      t,
      a.apiKey,
      buildSdf({ meta: freightMeta(), data: freightData(77), schema: FREIGHT_SCHEMA }),
    ).expect(201);
    const broken = await upload(
      t,
      a.apiKey,
      buildSdf({ meta: freightMeta(), schema: FREIGHT_SCHEMA, entries: { 'data.json': Buffer.from('{"bill": ') } }),
    ).expect(201);
    const judgedInvalid = await waitForFinal(t, a.apiKey, invalid.body.id as string);
    expect(judgedInvalid.body.status).toBe('invalid');
    expect(judgedInvalid.body.validation.error.code).toBe('SDF_ERROR_SCHEMA_MISMATCH');
    expect(judgedInvalid.body.summary).toEqual({ ...MAPPED, title: 'Freight bill 77', number: '77' });
    const judgedBroken = await waitForFinal(t, a.apiKey, broken.body.id as string);
    expect(judgedBroken.body.status).toBe('invalid');
    expect(judgedBroken.body.summary).toBeNull();
    const all = await t.http().get('/list?limit=100').set('X-API-Key', a.apiKey).expect(200);
    expect(all.body.documents.map((d: { id: string }) => d.id)).toContain(broken.body.id);

    // The backfill summarizes a document stored before summaries existed with the mapping too.
    await t.ds.query(
      `UPDATE documents SET summary = NULL, summary_number = NULL, summary_counterparty = NULL, summary_amount = NULL,
         summary_currency = NULL, summary_issue_date = NULL, summary_due_date = NULL, summary_references = '{}',
         summary_text = NULL, summary_search = NULL, summarized_at = NULL WHERE id = $1`,
      [mapped.body.id],
    );
    expect(await t.app.get(SummaryBackfill).runBatch()).toBe(1);
    const refilled = await t.http().get(`/sdf/${mapped.body.id}`).set('X-API-Key', a.apiKey).expect(200);
    expect(refilled.body.summary).toEqual(MAPPED);
  }, 120_000);

  it("POST /validate answers the summary the list would show, with the tenant's mapping", async () => {
    const ok = await validate(a, buildSdf({ meta: freightMeta(), data: freightData(), schema: FREIGHT_SCHEMA })).expect(
      200,
    );
    expect(ok.body).toMatchObject({ valid: true, registry_match: true, summary: MAPPED });
    const failed = await validate(
      a,
      buildSdf({ meta: freightMeta(), data: freightData(77), schema: FREIGHT_SCHEMA }),
    ).expect(422);
    expect(failed.body.summary).toEqual({ ...MAPPED, title: 'Freight bill 77', number: '77' });
    const unreadable = await validate(
      a,
      buildSdf({ meta: freightMeta(), schema: FREIGHT_SCHEMA, entries: { 'data.json': Buffer.from('{') } }),
    ).expect(422);
    expect(unreadable.body.summary).toBeNull();
    // Another tenant's mapping is not applied, and a built-in type gets its built-in summary.
    const other = await validate(
      b,
      buildSdf({ meta: freightMeta(), data: freightData(), schema: FREIGHT_SCHEMA }),
    ).expect(200);
    expect(other.body.summary).toMatchObject({ title: 'Freight bill CARRIER-1', references: [] });
    const invoice = await validate(b, buildSdf()).expect(200);
    expect(invoice.body.summary).toMatchObject({ title: 'Invoice INV-2026-00142', amount: '1713.60', currency: 'EUR' });
  });
});
