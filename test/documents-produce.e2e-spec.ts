import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openArchive } from '../src/sdf/index.js';
import { pdfText } from '../src/sdf/testing/pdf-text.js';
import { startApp, type TestApp } from './helpers/app.js';
import { downloadFile, waitForFinal } from './helpers/documents.js';
import { distCli, projectRoot, requireBuild, runNode } from './helpers/processes.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

const example = (name: string, file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(projectRoot, 'examples', name, `${file}.json`), 'utf8')) as Record<string, unknown>;

/** The body of POST /sdf/produce for an example of examples/: its data, schema and meta fields. */
const exampleBody = (name: string) => ({
  data: example(name, 'data'),
  schema: example(name, 'schema'),
  meta: example(name, 'meta'),
});

const storedFiles = (t: TestApp): string[] => {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else out.push(join(dir, entry.name));
    }
  };
  walk(t.config.env.STORAGE_LOCAL_DIR);
  return out;
};

describe('POST /sdf/produce: the service makes SDF files from data (rule 10)', () => {
  let t: TestApp;
  let tenant: TenantFixture;
  let other: TenantFixture;
  const dir = mkdtempSync(join(tmpdir(), 'sdf-produce-'));

  beforeAll(async () => {
    requireBuild(distCli);
    t = await startApp({ env: { VALIDATION_POOL_WORKERS: '1' } });
    tenant = await createTenant(t, { rate_limit_rpm: 10_000 });
    other = await createTenant(t, { rate_limit_rpm: 10_000 });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const produce = (apiKey: string, body: unknown, headers: Record<string, string> = {}, path = '/sdf/produce') =>
    t
      .http()
      .post(path)
      .set('X-API-Key', apiKey)
      .set(headers)
      .send(body as object);

  for (const name of ['invoice', 'purchase-order', 'nomination']) {
    it(`${name}: 201 pending, then valid; the download passes sdf validate and shows the document`, async () => {
      const body = exampleBody(name);
      const res = await produce(tenant.apiKey, body).expect(201);
      expect(res.body).toMatchObject({
        document_type: body.data.document_type,
        schema_id: body.meta.schema_id,
        status: 'pending',
        is_signed: false,
      });
      const final = await waitForFinal(t, tenant.apiKey, res.body.id as string);
      expect(final.body.status).toBe('valid');

      const file = join(dir, `${name}.sdf`);
      const archive = await downloadFile(t, tenant.apiKey, res.body.id as string);
      writeFileSync(file, archive);
      const validated = await runNode([distCli, 'validate', file], { PATH: process.env.PATH });
      expect(validated.code).toBe(0);
      expect(validated.stdout).toMatch(/^VALID /);

      const entries = (await openArchive(archive)).files;
      expect(JSON.parse(entries.get('data.json')!.toString('utf8'))).toEqual(body.data);
      const meta = JSON.parse(entries.get('meta.json')!.toString('utf8'));
      expect(meta).toMatchObject({ document_id: res.body.document_id, issuer: body.meta.issuer });
      const text = pdfText(entries.get('visual.pdf')!);
      const number = String(body.data.invoice_number ?? body.data.order_number ?? body.data.nomination_id);
      expect(text).toContain(number);
      expect(text).toContain('Page 1 of 1');

      // The upload's audit entry and events: a produced document is stored as an uploaded one.
      const audit = await t.ds.query(`SELECT action, actor FROM audit_log WHERE resource_id = $1 ORDER BY created_at`, [
        res.body.id,
      ]);
      const actor = `api_key:${tenant.keyPrefix}`;
      expect(audit).toEqual([
        { action: 'upload', actor },
        { action: 'download', actor },
      ]);
      const events = await t.ds.query(
        `SELECT event FROM outbox_events WHERE payload->'data'->>'id' = $1 ORDER BY created_at`,
        [res.body.id],
      );
      expect(events.map((e: { event: string }) => e.event)).toEqual(['document.uploaded', 'document.validated']);
    });
  }

  it("signs the file with the tenant's active key when asked: valid, signed, trusted, and audited", async () => {
    const res = await produce(tenant.apiKey, { ...exampleBody('invoice'), sign: true }).expect(201);
    const final = await waitForFinal(t, tenant.apiKey, res.body.id as string);
    expect(final.body).toMatchObject({
      status: 'valid',
      is_signed: true,
      validation: { checks: { signature: 'pass' }, signature: { valid: true, trusted: true } },
    });
    const keys = await t.http().get(`/.well-known/sdf-keys/${tenant.slug}`).expect(200);
    const file = join(dir, 'signed-invoice.sdf');
    writeFileSync(file, await downloadFile(t, tenant.apiKey, res.body.id as string));
    const jwks = join(dir, 'jwks.json');
    writeFileSync(jwks, JSON.stringify(keys.body));
    const verified = await runNode([distCli, 'verify', file, '--jwks', jwks], { PATH: process.env.PATH });
    expect(verified.stdout).toMatch(/^VALID, trusted/);
    const audit = await t.ds.query(
      `SELECT action, metadata->>'key_id' AS key_id FROM audit_log WHERE resource_id = $1 AND action IN ('upload', 'sign') ORDER BY created_at`,
      [res.body.id],
    );
    expect(audit).toEqual([
      { action: 'upload', key_id: null },
      { action: 'sign', key_id: final.body.validation.signature.key_id },
    ]);
  });

  it('answers 422 with the schema errors and stores nothing when the data fails the schema', async () => {
    const body = exampleBody('invoice');
    const data = { ...body.data, invoice_number: 42 } as Record<string, unknown>;
    delete data.issue_date;
    const before = await t.ds.query(`SELECT count(*)::int AS n FROM documents`);
    const files = storedFiles(t).length;
    const res = await produce(tenant.apiKey, { ...body, data }).expect(422);
    expect(res.body.error).toMatchObject({ code: 'SDF_ERROR_SCHEMA_MISMATCH', file: 'data.json' });
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { path: '/invoice_number', message: 'must be string' },
        { path: '/issue_date', message: "must have required property 'issue_date'" },
      ]),
    );
    expect(await t.ds.query(`SELECT count(*)::int AS n FROM documents`)).toEqual(before);
    expect(storedFiles(t)).toHaveLength(files);
  });

  it("takes a registered schema by id and version; another tenant's schema id is 404", async () => {
    const body = exampleBody('invoice');
    await t
      .http()
      .post('/schemas')
      .set('X-API-Key', tenant.apiKey)
      .send({ schema_id: 'invoice/v7', version: '1.0.0', schema: body.schema })
      .expect(201);
    const withId = { data: body.data, schema_id: 'invoice/v7', version: '1.0.0', meta: body.meta };
    const res = await produce(tenant.apiKey, withId).expect(201);
    expect(res.body.schema_id).toBe('invoice/v7');
    const final = await waitForFinal(t, tenant.apiKey, res.body.id as string);
    expect(final.body).toMatchObject({ status: 'valid', validation: { registry_match: true } });

    const refused = await produce(other.apiKey, withId).expect(404);
    expect(refused.body.error.code).toBe('NOT_FOUND');
    await produce(tenant.apiKey, { ...withId, version: '9.9.9' }).expect(404);
    // Neither or both of schema and schema_id: 400.
    await produce(tenant.apiKey, { data: body.data, meta: body.meta }).expect(400);
    await produce(tenant.apiKey, { ...withId, schema: body.schema }).expect(400);
  });

  it('answers a retry with the same Idempotency-Key with the first document', async () => {
    const body = exampleBody('purchase-order');
    const headers = { 'Idempotency-Key': `produce-${Date.now()}` };
    const first = await produce(tenant.apiKey, body, headers).expect(201);
    const again = await produce(tenant.apiKey, body, headers).expect(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const rows = await t.ds.query(`SELECT id FROM documents WHERE idempotency_key = $1`, [headers['Idempotency-Key']]);
    expect(rows).toHaveLength(1);
    await produce(tenant.apiKey, body, { 'Idempotency-Key': 'has space' }).expect(400);
  });

  it('refuses a body over the JSON body limit with 413 before reading it, and stores nothing', async () => {
    const body = exampleBody('invoice');
    const data = { ...body.data, line_items: Array.from({ length: 1_200_000 }, () => 1) };
    const before = await t.ds.query(`SELECT count(*)::int AS n FROM documents`);
    // About 2.4 MB of JSON against JSON_BODY_LIMIT_BYTES (1 MiB by default).
    await produce(tenant.apiKey, { ...body, data }).expect(413);
    expect(await t.ds.query(`SELECT count(*)::int AS n FROM documents`)).toEqual(before);
  });

  it('has no /v1 path on the self-hosted deployment', async () => {
    await produce(tenant.apiKey, exampleBody('invoice'), {}, '/v1/sdf/produce').expect(404);
  });
});

describe('POST /v1/sdf/produce on the managed deployment', () => {
  let t: TestApp;
  let tenant: TenantFixture;

  beforeAll(async () => {
    t = await startApp({ env: { DEPLOYMENT_MODE: 'managed', VALIDATION_POOL_WORKERS: '1' } });
    tenant = await createTenant(t);
  });
  afterAll(() => t.close());

  it('makes the same document under the versioned path', async () => {
    const res = await t
      .http()
      .post('/v1/sdf/produce')
      .set('X-API-Key', tenant.apiKey)
      .send(exampleBody('nomination'))
      .expect(201);
    expect(res.body).toMatchObject({ document_type: 'nomination', status: 'pending' });
    expect((await waitForFinal(t, tenant.apiKey, res.body.id as string)).body.status).toBe('valid');
  });
});
