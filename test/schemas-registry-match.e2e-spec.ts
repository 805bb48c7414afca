import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INVOICE_SCHEMA, buildSdf, invoiceMeta } from '../src/sdf/testing/build-sdf.js';
import { startApp, type TestApp } from './helpers/app.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

/**
 * S14 acceptance: an upload whose meta.json names a registered schema reports `registry_match`, and is
 * still judged by its embedded schema. Runs against the real upload, record and validate endpoints.
 */
describe('registry_match on uploaded documents (S14)', () => {
  let t: TestApp;
  let tenant: TenantFixture;

  beforeAll(async () => {
    t = await startApp();
    tenant = await createTenant(t);
    const register = (schema_id: string, schema: object) =>
      t.http().post('/schemas').set('X-API-Key', tenant.apiKey).send({ schema_id, version: '1', schema }).expect(201);
    await register('invoice/v1', INVOICE_SCHEMA);
    // Stricter than the embedded schema: the fixture's data.json has no purchase_order.
    await register('invoice/v2', {
      ...INVOICE_SCHEMA,
      required: [...INVOICE_SCHEMA.required, 'purchase_order'],
      properties: { ...INVOICE_SCHEMA.properties, purchase_order: { type: 'string' } },
    });
  });
  afterAll(() => t.close());

  async function uploadAndSettle(schemaId: string) {
    const archive = buildSdf({ meta: { ...invoiceMeta(), document_id: randomUUID(), schema_id: schemaId } });
    const up = await t
      .http()
      .post('/upload')
      .set('X-API-Key', tenant.apiKey)
      .attach('file', archive, { filename: 'invoice.sdf', contentType: 'application/octet-stream' })
      .expect(201);
    expect(up.body.schema_id).toBe(schemaId);
    for (let i = 0; i < 200; i++) {
      const res = await t.http().get(`/sdf/${up.body.id}`).set('X-API-Key', tenant.apiKey).expect(200);
      if (res.body.status !== 'pending') return res.body as Record<string, unknown>;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('document stayed pending');
  }

  it('reports true when the registered schema has the same content', async () => {
    const record = await uploadAndSettle('invoice/v1');
    expect(record.status).toBe('valid');
    expect(record.validation).toMatchObject({ registry_match: true });
  });

  it('reports false when the registered schema differs, and judges the file by its embedded schema', async () => {
    const record = await uploadAndSettle('invoice/v2');
    // Valid: the embedded schema is authoritative (SDF-SPEC rule 6), the stricter registered one is not applied.
    expect(record.status).toBe('valid');
    expect(record.validation).toMatchObject({ registry_match: false });
  });

  it('reports null when the schema id is not registered', async () => {
    const record = await uploadAndSettle('invoice/v9');
    expect(record.status).toBe('valid');
    expect(record.validation).toMatchObject({ registry_match: null });
  });

  it('reports the same on the synchronous POST /validate, which stores nothing', async () => {
    for (const [schemaId, expected] of [
      ['invoice/v1', true],
      ['invoice/v2', false],
      ['invoice/v9', null],
    ] as const) {
      const archive = buildSdf({ meta: { ...invoiceMeta(), document_id: randomUUID(), schema_id: schemaId } });
      const res = await t
        .http()
        .post('/validate')
        .set('X-API-Key', tenant.apiKey)
        .attach('file', archive, { filename: 'invoice.sdf', contentType: 'application/octet-stream' })
        .expect(200);
      expect(res.body).toMatchObject({ valid: true, registry_match: expected });
    }
  });
});
