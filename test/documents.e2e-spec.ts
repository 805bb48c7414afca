import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { binary, upload, waitForFinal } from './helpers/documents.js';
import { buildInvalidSdf, buildRawSdf, buildSdf, invoiceMeta } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

describe('documents lifecycle (SDF-SPEC Documents, S1-S3, S11)', () => {
  let t: TestApp;
  let tenant: TenantFixture;
  const uploadTmp = mkdtempSync(join(tmpdir(), 'sdf-upload-tmp-'));

  beforeAll(async () => {
    t = await startApp({ env: { UPLOAD_TMP_DIR: uploadTmp, VALIDATION_POOL_WORKERS: '1' } });
    tenant = await createTenant(t, { rate_limit_rpm: 10_000 });
  });
  afterAll(async () => {
    await t.close();
    rmSync(uploadTmp, { recursive: true, force: true });
  });

  const storedPath = (key: string) => join(t.config.env.STORAGE_LOCAL_DIR, key);
  const countDocuments = async () => Number((await t.ds.query(`SELECT count(*) AS n FROM documents`))[0].n);

  it('uploads a valid file: 201 pending, then valid; download, meta and data serve the layers', async () => {
    const { archive, documentId } = await buildSdf();
    const res = await upload(t, tenant.apiKey, archive).expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      document_id: documentId,
      document_type: 'invoice',
      schema_id: 'invoice/v1',
      sdf_version: '0.1',
      is_signed: false,
      status: 'pending',
      file_size_bytes: archive.length,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      // Read from data.json by the validation job: none yet.
      summary: null,
    });
    const id = res.body.id as string;

    const final = await waitForFinal(t, tenant.apiKey, id);
    expect(final.body.status).toBe('valid');
    expect(final.body.validation).toMatchObject({
      valid: true,
      checks: { container: 'pass', meta: 'pass', schema: 'pass', data: 'pass', pdf: 'pass', signature: 'skipped' },
      error: null,
      registry_match: null,
    });

    const download = await t
      .http()
      .get(`/download/${id}`)
      .set('X-API-Key', tenant.apiKey)
      .buffer(true)
      .parse(binary as never)
      .expect(200);
    expect(download.headers['content-type']).toBe('application/octet-stream');
    expect(download.headers['content-disposition']).toBe(`attachment; filename="${documentId}.sdf"`);
    expect(Buffer.compare(download.body as Buffer, archive)).toBe(0);

    const meta = await t.http().get(`/meta/${id}`).set('X-API-Key', tenant.apiKey).expect(200);
    expect(meta.body).toMatchObject({
      sdf_version: '0.1',
      document_id: documentId,
      document_type: 'invoice',
      schema_id: 'invoice/v1',
      issuer: { name: 'Acme Supplies GmbH', id: 'DE123456789' },
      issued_at: expect.any(String),
    });
    const data = await t.http().get(`/data/${id}`).set('X-API-Key', tenant.apiKey).expect(200);
    expect(data.body).toMatchObject({ document_type: 'invoice', invoice_number: 'INV-2026-00142' });

    const audit = await t.ds.query(`SELECT action, actor FROM audit_log WHERE resource_id = $1 ORDER BY created_at`, [
      id,
    ]);
    expect(audit).toEqual([
      { action: 'upload', actor: `api_key:${tenant.keyPrefix}` },
      { action: 'download', actor: `api_key:${tenant.keyPrefix}` },
    ]);
    const events = await t.ds.query(
      `SELECT event, payload FROM outbox_events WHERE payload->'data'->>'id' = $1 ORDER BY created_at`,
      [id],
    );
    expect(events.map((e: { event: string }) => e.event)).toEqual(['document.uploaded', 'document.validated']);
    expect(events[1].payload).toMatchObject({
      tenant_id: tenant.id,
      document_id: documentId,
      data: { id, status: 'valid' },
    });
  });

  it('keeps the error of an invalid file on the record', async () => {
    const res = await upload(t, tenant.apiKey, buildInvalidSdf()).expect(201);
    const final = await waitForFinal(t, tenant.apiKey, res.body.id);
    expect(final.body.status).toBe('invalid');
    expect(final.body.validation.error).toMatchObject({
      code: 'SDF_ERROR_SCHEMA_MISMATCH',
      details: expect.arrayContaining([expect.objectContaining({ path: '/invoice_number' })]),
    });
    expect(final.body.validation.checks).toMatchObject({
      container: 'pass',
      meta: 'pass',
      schema: 'pass',
      data: 'fail',
      pdf: 'skipped',
    });
  });

  it('takes document_type from data.json at validation when meta.json has none (S2 reads meta.json alone)', async () => {
    const meta: Record<string, unknown> = { ...invoiceMeta(), document_id: randomUUID() };
    delete meta.document_type;
    const res = await upload(t, tenant.apiKey, buildRawSdf({ meta })).expect(201);
    expect(res.body).toMatchObject({ status: 'pending', document_type: null });
    const final = await waitForFinal(t, tenant.apiKey, res.body.id);
    expect(final.body).toMatchObject({ status: 'valid', document_type: 'invoice' });
    const listed = await t.http().get('/list?document_type=invoice&limit=100').set('X-API-Key', tenant.apiKey);
    expect(listed.body.documents.map((d: { id: string }) => d.id)).toContain(res.body.id);
  });

  it('ends a file uploaded with a verifying signature valid and signed (S3)', async () => {
    const { archive } = await buildSdf({ sign: 'ECDSA-P256' });
    const res = await upload(t, tenant.apiKey, archive).expect(201);
    const final = await waitForFinal(t, tenant.apiKey, res.body.id);
    expect(final.body).toMatchObject({ status: 'valid', is_signed: true, signature_algorithm: 'ECDSA-P256' });
    expect(final.body.validation.signature).toMatchObject({ valid: true, algorithm: 'ECDSA-P256', trusted: false });
  });

  it('deletes: 204, then 404 on every endpoint, object gone, audit row and event recorded', async () => {
    const { archive } = await buildSdf();
    const res = await upload(t, tenant.apiKey, archive).expect(201);
    const id = res.body.id as string;
    await waitForFinal(t, tenant.apiKey, id);
    const [row] = await t.ds.query(`SELECT storage_key FROM documents WHERE id = $1`, [id]);
    expect(existsSync(storedPath(row.storage_key))).toBe(true);

    const del = await t.http().delete(`/delete/${id}`).set('X-API-Key', tenant.apiKey).expect(204);
    expect(del.text).toBe('');
    for (const [method, path] of [
      ['get', `/sdf/${id}`],
      ['get', `/download/${id}`],
      ['get', `/meta/${id}`],
      ['get', `/data/${id}`],
      ['delete', `/delete/${id}`],
      ['delete', `/sdf/${id}`],
    ] as const) {
      const r = await t.http()[method](path).set('X-API-Key', tenant.apiKey);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error.code).toBe('NOT_FOUND');
    }
    expect(existsSync(storedPath(row.storage_key))).toBe(false);
    const audit = await t.ds.query(
      `SELECT action, metadata FROM audit_log WHERE resource_id = $1 AND action = 'delete'`,
      [id],
    );
    expect(audit).toHaveLength(1);
    const events = await t.ds.query(
      `SELECT event FROM outbox_events WHERE event = 'document.deleted' AND payload->'data'->>'id' = $1`,
      [id],
    );
    expect(events).toHaveLength(1);
  });

  it('serves the aliases POST /sdf, GET /sdf and DELETE /sdf/:id (S1)', async () => {
    const { archive } = await buildSdf({ documentType: 'nomination' });
    const created = await upload(t, tenant.apiKey, archive, {}, '/sdf').expect(201);
    const listed = await t.http().get('/sdf?document_type=nomination').set('X-API-Key', tenant.apiKey).expect(200);
    expect(listed.body.documents.map((d: { id: string }) => d.id)).toContain(created.body.id);
    await t.http().delete(`/sdf/${created.body.id}`).set('X-API-Key', tenant.apiKey).expect(204);
    await t.http().get(`/sdf/${created.body.id}`).set('X-API-Key', tenant.apiKey).expect(404);
  });

  it('returns the first record for a retried Idempotency-Key (S2)', async () => {
    const { archive } = await buildSdf();
    const first = await upload(t, tenant.apiKey, archive, { 'Idempotency-Key': 'retry-1' }).expect(201);
    const again = await upload(t, tenant.apiKey, archive, { 'Idempotency-Key': 'retry-1' }).expect(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.created_at).toBe(first.body.created_at);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const rows = await t.ds.query(`SELECT id FROM documents WHERE idempotency_key = 'retry-1'`);
    expect(rows).toHaveLength(1);
    await upload(t, tenant.apiKey, archive, { 'Idempotency-Key': 'bad key with spaces' }).expect(400);
  });

  it.each([
    ['a file that is not a ZIP', () => Buffer.from('%PDF-1.7 definitely not a zip'), 'SDF_ERROR_NOT_ZIP', {}],
    [
      'a ZIP without meta.json',
      () => buildRawSdf({ entries: { 'meta.json': null } }),
      'SDF_ERROR_INVALID_META',
      { file: 'meta.json' },
    ],
    [
      'a ZIP whose meta.json is not JSON',
      () => buildRawSdf({ entries: { 'meta.json': Buffer.from('{nope') } }),
      'SDF_ERROR_INVALID_META',
      { file: 'meta.json' },
    ],
  ])('answers 422 for %s and stores nothing', async (_name, make, code, file) => {
    const before = await countDocuments();
    const res = await upload(t, tenant.apiKey, make()).expect(422);
    // F3: details always, and the entry concerned when there is one.
    const details = [{ path: expect.any(String), message: expect.any(String) }];
    expect(res.body).toEqual({ error: { code, message: expect.any(String), ...file, details } });
    expect(await countDocuments()).toBe(before);
    expect(readdirSync(uploadTmp)).toEqual([]);
  });

  it('refuses a request without the file field or not multipart with 400', async () => {
    await t.http().post('/upload').set('X-API-Key', tenant.apiKey).field('other', 'x').expect(400);
    await t.http().post('/upload').set('X-API-Key', tenant.apiKey).send({ file: 'x' }).expect(400);
  });

  describe('POST /validate (F10)', () => {
    it('answers 200 with the checks for a valid file and stores nothing', async () => {
      const before = await countDocuments();
      const { archive } = await buildSdf();
      const res = await t
        .http()
        .post('/validate')
        .set('X-API-Key', tenant.apiKey)
        .attach('file', archive, 'x.sdf')
        .expect(200);
      expect(res.body).toMatchObject({
        valid: true,
        sdf_version: '0.1',
        document_type: 'invoice',
        is_signed: false,
        checks: { container: 'pass', meta: 'pass', schema: 'pass', data: 'pass', pdf: 'pass', signature: 'skipped' },
      });
      expect(await countDocuments()).toBe(before);
    });

    it('answers 422 with valid false and the error for an invalid file', async () => {
      const res = await t
        .http()
        .post('/validate')
        .set('X-API-Key', tenant.apiKey)
        .attach('file', buildInvalidSdf(), 'x.sdf')
        .expect(422);
      expect(res.body).toMatchObject({
        valid: false,
        error: {
          code: 'SDF_ERROR_SCHEMA_MISMATCH',
          message: expect.any(String),
          file: 'data.json',
          details: [expect.objectContaining({ path: '/invoice_number' })],
        },
      });
      const notZip = await t
        .http()
        .post('/validate')
        .set('X-API-Key', tenant.apiKey)
        .attach('file', Buffer.from('hello'), 'x.sdf')
        .expect(422);
      expect(notZip.body).toMatchObject({ valid: false, error: { code: 'SDF_ERROR_NOT_ZIP' } });
    });
  });

  it('meta stays readable for a file with a meta.json of its own shape', async () => {
    const meta = { ...invoiceMeta(), document_id: '3b241101-e2bb-4255-8caf-4136c566a962', locale: 'de-DE' };
    const res = await upload(t, tenant.apiKey, buildRawSdf({ meta })).expect(201);
    const got = await t.http().get(`/meta/${res.body.id}`).set('X-API-Key', tenant.apiKey).expect(200);
    expect(got.body).toMatchObject({
      document_id: meta.document_id,
      locale: 'de-DE',
      issued_at: invoiceMeta().created_at,
    });
  });
});
