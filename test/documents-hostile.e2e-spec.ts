import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentsRepository } from '../src/documents/documents.repository.js';
import { ValidationPoolService } from '../src/documents/validation-pool.service.js';
import { documentDataKey } from '../src/storage/storage-driver.js';
import { startApp, type TestApp } from './helpers/app.js';
import { liveMemory } from './helpers/memory.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { buildRawSdf, invoiceMeta } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

const MB = 1024 * 1024;

/** The parts of GET /sdf/:id these tests read. */
interface DocumentDetail {
  status: string;
  document_type: string | null;
  validation: { error: { code: string; file?: string } | null } | null;
}

/** Runs `work` while sampling live memory; returns its result and the peak growth over the start. */
async function peakGrowth<T>(work: () => Promise<T>): Promise<{ value: T; growth: number }> {
  const before = liveMemory();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, liveMemory())), 100);
  try {
    const value = await work();
    peak = Math.max(peak, liveMemory());
    return { value, growth: peak - before };
  } finally {
    clearInterval(sampler);
  }
}

const ANY_TYPE_SCHEMA = { type: 'object', properties: { document_type: { type: 'string' } } };

const freshMeta = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  ...invoiceMeta(),
  document_id: randomUUID(),
  ...extra,
});

/** Nested arrays `depth` deep, as JSON text (built as text: JSON.stringify would overflow the stack). */
const nestedJson = (depth: number, inner = '1'): string => '['.repeat(depth) + inner + ']'.repeat(depth);

/** An archive whose entries are given as raw JSON text (for texts JSON.stringify cannot produce). */
function rawJsonSdf(texts: { meta?: string; data?: string; schema?: unknown }): Buffer {
  return buildRawSdf({
    meta: freshMeta(),
    schema: texts.schema ?? ANY_TYPE_SCHEMA,
    data: { document_type: 'invoice' },
    entries: {
      ...(texts.meta !== undefined ? { 'meta.json': Buffer.from(texts.meta, 'utf8') } : {}),
      ...(texts.data !== undefined ? { 'data.json': Buffer.from(texts.data, 'utf8') } : {}),
    },
  });
}

/** GET with the body counted and hashed as it streams, never held (the API shares this process). */
function streamGet(
  url: string,
  apiKey: string,
  onProgress: (bytes: number) => void,
): Promise<{ status: number; bytes: number; sha256: string; head: string }> {
  return new Promise((resolve, reject) => {
    httpGet(url, { headers: { 'X-API-Key': apiKey } }, (res) => {
      const hash = createHash('sha256');
      let bytes = 0;
      let head = '';
      res.on('data', (chunk: Buffer) => {
        if (head.length < 200) head += chunk.subarray(0, 200).toString('utf8');
        const mark = Math.floor(bytes / (4 * MB));
        bytes += chunk.length;
        hash.update(chunk);
        if (Math.floor(bytes / (4 * MB)) !== mark) onProgress(bytes);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, sha256: hash.digest('hex'), head }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

describe('hostile files and inputs: work in the pool, bounded meta, no 500 on text', () => {
  let t: TestApp;
  let pendingApp: TestApp;
  let tenant: TenantFixture;
  let pendingTenant: TenantFixture;
  let baseUrl: string;

  beforeAll(async () => {
    // Polling for final states must not meet the tenant rate limit; a loaded machine must not meet the time budget.
    t = await startApp({
      env: { VALIDATION_POOL_WORKERS: '1', RATE_LIMIT_DEFAULT_RPM: '100000', VALIDATION_TIMEOUT_MS: '60000' },
    });
    tenant = await createTenant(t);
    await t.app.listen(0, '127.0.0.1');
    baseUrl = (await t.app.getUrl()).replace('[::1]', '127.0.0.1');
    // An API without a worker: its uploads stay pending.
    pendingApp = await startApp({ env: { PROCESS_ROLE: 'api' } });
    pendingTenant = await createTenant(pendingApp);
  }, 60_000);
  afterAll(async () => {
    await pendingApp?.close();
    await t?.close();
  });

  async function uploadFinal(archive: Buffer): Promise<{ id: string; status: string; body: DocumentDetail }> {
    const res = await upload(t, tenant.apiKey, archive);
    expect(res.status).toBe(201);
    const final = await waitForFinal(t, tenant.apiKey, res.body.id, 60_000);
    return { id: res.body.id, status: final.body.status, body: final.body };
  }

  describe('work on untrusted bytes runs in the pool', () => {
    it('POST /verify/:id of a 200 KB file whose vendor/ entries inflate to 196 MB: read in a pool process, API memory flat', async () => {
      let archive: Buffer | null = buildRawSdf({
        meta: freshMeta(),
        extra: [0, 1, 2, 3].map((i) => ({ name: `vendor/pad${i}.bin`, data: Buffer.alloc(49 * MB) })),
      });
      expect(archive.length).toBeLessThan(400 * 1024);
      const { id, status } = await uploadFinal(archive);
      archive = null;
      expect(status).toBe('valid');

      const pool = t.app.get(ValidationPoolService);
      pool.lastVerifyPid = undefined;
      const { value: res, growth } = await peakGrowth(() =>
        t.http().post(`/verify/${id}`).set('X-API-Key', tenant.apiKey),
      );
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ valid: false, reason: 'the archive is not signed' });
      // The archive was inflated by a pool process, not by this one.
      expect(pool.lastVerifyPid).toEqual(expect.any(Number));
      expect(pool.lastVerifyPid).not.toBe(process.pid);
      expect(growth).toBeLessThan(32 * MB);
    }, 120_000);

    it('GET /data/:id of a 46 KB file whose data.json inflates to 40 MB: a pool process writes it out, the API streams it', async () => {
      let dataText: string | null = `{"document_type":"invoice","pad":"${'x'.repeat(40 * MB)}"}`;
      const expected = createHash('sha256').update(dataText).digest('hex');
      const expectedBytes = Buffer.byteLength(dataText);
      let archive: Buffer | null = buildRawSdf({
        meta: freshMeta(),
        schema: ANY_TYPE_SCHEMA,
        entries: { 'data.json': Buffer.from(dataText) },
      });
      dataText = null;
      expect(archive.length).toBeLessThan(100 * 1024);
      const { id, status } = await uploadFinal(archive);
      archive = null;
      expect(status).toBe('valid');
      // Validation copies nothing out; the first GET /data/:id has a pool process write the copy.
      const dataPath = join(t.config.env.STORAGE_LOCAL_DIR, documentDataKey(tenant.id, id));
      expect(existsSync(dataPath)).toBe(false);

      // Sampled every 4 MB received (a collection each time): holding the body would show tens of MB.
      const before = liveMemory();
      let peak = before;
      const res = await streamGet(`${baseUrl}/data/${id}`, tenant.apiKey, () => (peak = Math.max(peak, liveMemory())));
      const growth = peak - before;
      expect(res.status).toBe(200);
      expect(res.bytes).toBe(expectedBytes);
      expect(res.sha256).toBe(expected);
      expect(growth).toBeLessThan(16 * MB);
      expect(existsSync(dataPath)).toBe(true);

      // The second request streams the kept copy.
      const again = await streamGet(`${baseUrl}/data/${id}`, tenant.apiKey, () => undefined);
      expect(again.status).toBe(200);
      expect(again.sha256).toBe(expected);
    }, 120_000);

    it('answers 409 INVALID_STATE to /data and /verify of a pending or invalid document; /meta and /download still answer', async () => {
      const pending = await upload(pendingApp, pendingTenant.apiKey, buildRawSdf({ meta: freshMeta() }));
      expect(pending.status).toBe(201);
      const invalid = await uploadFinal(rawJsonSdf({ data: nestedJson(100_000) }));
      expect(invalid.status).toBe('invalid');
      const cases: [TestApp, string, string][] = [
        [pendingApp, pendingTenant.apiKey, pending.body.id],
        [t, tenant.apiKey, invalid.id],
      ];
      for (const [app, key, id] of cases) {
        const data = await app.http().get(`/data/${id}`).set('X-API-Key', key);
        expect(data.status).toBe(409);
        expect(data.body.error.code).toBe('INVALID_STATE');
        const verify = await app.http().post(`/verify/${id}`).set('X-API-Key', key);
        expect(verify.status).toBe(409);
        expect(verify.body.error.code).toBe('INVALID_STATE');
        expect((await app.http().get(`/meta/${id}`).set('X-API-Key', key)).status).toBe(200);
        expect((await app.http().get(`/download/${id}`).set('X-API-Key', key)).status).toBe(200);
      }
    }, 120_000);
  });

  describe('meta.json is bounded at upload (64 KiB inflated)', () => {
    it('refuses a 5 MB meta.json with 422 SDF_ERROR_INVALID_META, stores nothing, and never holds it', async () => {
      let archive: Buffer | null = buildRawSdf({ meta: freshMeta({ notes: 'n'.repeat(5 * MB) }) });
      expect(archive.length).toBeLessThan(64 * 1024);
      const sent = archive;
      archive = null;
      const before = await t.ds.query(`SELECT count(*)::int AS n FROM documents`);
      const { value: res, growth } = await peakGrowth(async () => upload(t, tenant.apiKey, sent));
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'SDF_ERROR_INVALID_META', file: 'meta.json' });
      expect(res.body.error.message).toContain('65536');
      expect(await t.ds.query(`SELECT count(*)::int AS n FROM documents`)).toEqual(before);
      // Inflation stops at the cap: nothing near the 5 MB (and its parsed copy) was ever live here.
      expect(growth).toBeLessThan(4 * MB);
    });

    it('keeps a meta.json just under the cap, unknown fields included, and GET /meta returns it', async () => {
      const meta = freshMeta({ notes: 'n'.repeat(60 * 1024) });
      const res = await upload(t, tenant.apiKey, buildRawSdf({ meta }));
      expect(res.status).toBe(201);
      const got = await t.http().get(`/meta/${res.body.id}`).set('X-API-Key', tenant.apiKey);
      expect(got.status).toBe(200);
      expect(got.body.notes).toBe(meta.notes);
      expect(got.body.document_id).toBe(meta.document_id);
    });

    it('lists and lookups do not load the meta column', async () => {
      const repo = t.app.get(DocumentsRepository);
      const { rows } = await repo.listPage(tenant.id, { limit: 100, sort: 'uploaded', order: 'desc' });
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect((row as unknown as Record<string, unknown>).meta).toBeUndefined();
        expect((row as unknown as Record<string, unknown>).validation).toBeUndefined();
      }
      const one = await repo.findForTenant(tenant.id, rows[0]!.id);
      expect(one?.id).toBe(rows[0]!.id);
      expect(one?.meta).toBeUndefined();
      const list = await t.http().get('/list?limit=100').set('X-API-Key', tenant.apiKey);
      expect(list.status).toBe(200);
      expect(list.body.documents.length).toBe(rows.length);
    });
  });

  describe('text the service cannot store or serve is refused, never a 500', () => {
    it.each([
      ['/list?document_type=%00', 'query'],
      ['/sdf?status=valid&document_type=a%00b', 'query'],
      ['/schemas/a%00b', 'param'],
      ['/schemas/invoice%2Fv1?version=%00', 'query'],
      ['/schemas/invoice/v1?version=1%00', 'query'],
    ])('GET %s answers 400 VALIDATION_ERROR', async (path) => {
      const res = await t.http().get(path).set('X-API-Key', tenant.apiKey);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    });

    it.each([
      ['a NUL', '{"schema_id":"invoice/v9","version":"1","schema":{"type":"object","title":"a\\u0000b"}}'],
      ['a lone surrogate', '{"schema_id":"invoice/v9","version":"1","schema":{"type":"object","title":"\\ud800"}}'],
    ])('a JSON body holding %s answers 400 VALIDATION_ERROR', async (_what, body) => {
      const res = await t
        .http()
        .post('/schemas')
        .set('X-API-Key', tenant.apiKey)
        .set('Content-Type', 'application/json')
        .send(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details[0].path).toBe('/schema/title');
    });

    it.each([
      ['a NUL in a string', () => JSON.stringify(freshMeta({ notes: 'a\u0000b' }))],
      ['a lone surrogate', () => JSON.stringify(freshMeta({ issuer: '\ud800' }))],
      ['a NUL in a member name', () => JSON.stringify(freshMeta({ ['k\u0000']: 1 }))],
      ['nesting 100,000 deep', () => JSON.stringify(freshMeta()).replace(/}$/, `,"deep":${nestedJson(100_000)}}`)],
      [
        'nesting 20,000 deep within the size cap',
        () => JSON.stringify(freshMeta()).replace(/}$/, `,"deep":${nestedJson(20_000)}}`),
      ],
    ])('meta.json holding %s answers 422 SDF_ERROR_INVALID_META at upload', async (_what, meta) => {
      const res = await upload(t, tenant.apiKey, rawJsonSdf({ meta: meta() }));
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'SDF_ERROR_INVALID_META', file: 'meta.json' });
    });

    it.each([
      ['a NUL in a string', '{"document_type":"invoice","note":"a\\u0000b"}'],
      ['a lone surrogate', '{"document_type":"invoice","note":"\\ud800"}'],
      ['nesting 100,000 deep', `{"document_type":"invoice","deep":${nestedJson(100_000)}}`],
    ])(
      'data.json holding %s settles the document invalid with SDF_ERROR_INVALID_DATA',
      async (_what, data) => {
        const { id, status, body } = await uploadFinal(rawJsonSdf({ data }));
        expect(status).toBe('invalid');
        expect(body.validation?.error).toMatchObject({ code: 'SDF_ERROR_INVALID_DATA', file: 'data.json' });
        const res = await t.http().get(`/data/${id}`).set('X-API-Key', tenant.apiKey);
        expect(res.status).toBe(409);
      },
      60_000,
    );

    it('a data.json whose document_type holds a NUL (none in meta.json) settles invalid at once, not pending for good', async () => {
      const meta = freshMeta();
      delete (meta as Record<string, unknown>).document_type;
      const { status, body } = await uploadFinal(
        rawJsonSdf({ meta: JSON.stringify(meta), data: '{"document_type":"inv\\u0000oice"}' }),
      );
      expect(status).toBe('invalid');
      expect(body.document_type).toBeNull();
      expect(body.validation?.error?.code).toBe('SDF_ERROR_INVALID_DATA');
    }, 60_000);
  });
});
