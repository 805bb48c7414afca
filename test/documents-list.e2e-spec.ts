import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { upload } from './helpers/documents.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

interface Item {
  id: string;
  status: string;
  document_type: string;
}

describe('GET /list (S4) and tenant isolation (S5)', () => {
  let t: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  const ids: string[] = [];

  beforeAll(async () => {
    // API role only: the statuses below are set directly, so no validation job may race them.
    t = await startApp({ env: { PROCESS_ROLE: 'api' } });
    a = await createTenant(t, { rate_limit_rpm: 100_000 });
    b = await createTenant(t, { rate_limit_rpm: 100_000 });
    const invoice = (await buildSdf()).archive;
    const nomination = (await buildSdf({ documentType: 'nomination' })).archive;
    for (let batch = 0; batch < 25; batch++) {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          upload(t, a.apiKey, (batch * 10 + i) % 5 === 0 ? nomination : invoice).expect(201),
        ),
      );
      ids.push(...results.map((r) => r.body.id as string));
    }
    // Two in five valid, one in five invalid (over both types), the rest pending.
    await t.ds.query(
      `UPDATE documents SET status = CASE WHEN ('x' || substr(md5(id::text), 1, 4))::bit(16)::int % 5 < 2 THEN 'valid'
                                          WHEN ('x' || substr(md5(id::text), 1, 4))::bit(16)::int % 5 = 2 THEN 'invalid'
                                          ELSE 'pending' END`,
    );
  }, 180_000);
  afterAll(() => t.close());

  async function walk(query: string, apiKey = a.apiKey): Promise<{ pages: number[]; items: Item[] }> {
    const pages: number[] = [];
    const items: Item[] = [];
    let cursor: string | null = null;
    for (;;) {
      const res = await t
        .http()
        .get(`/list?${query}${cursor ? `&cursor=${cursor}` : ''}`)
        .set('X-API-Key', apiKey)
        .expect(200);
      pages.push(res.body.documents.length);
      items.push(...res.body.documents);
      if (!res.body.has_more) {
        expect(res.body.next_cursor).toBeNull();
        return { pages, items };
      }
      expect(typeof res.body.next_cursor).toBe('string');
      cursor = res.body.next_cursor as string;
    }
  }

  it('pages 250 documents as 100/100/50, newest first, no duplicate and no gap', async () => {
    const { pages, items } = await walk('limit=100');
    expect(pages).toEqual([100, 100, 50]);
    const seen = items.map((d) => d.id);
    expect(new Set(seen).size).toBe(250);
    expect([...seen].sort()).toEqual([...ids].sort());
    const rows = await t.ds.query(`SELECT id FROM documents WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC`, [
      a.id,
    ]);
    expect(seen).toEqual(rows.map((r: { id: string }) => r.id));
  });

  it('defaults to 20 a page', async () => {
    const res = await t.http().get('/list').set('X-API-Key', a.apiKey).expect(200);
    expect(res.body.documents).toHaveLength(20);
    expect(res.body.has_more).toBe(true);
    expect(Object.keys(res.body.documents[0]).sort()).toEqual(
      ['created_at', 'document_id', 'document_type', 'file_size_bytes', 'id', 'is_signed', 'status', 'summary'].sort(),
    );
  });

  it('combines the status and document_type filters across pages', async () => {
    for (const [status, type] of [
      ['valid', 'invoice'],
      ['invalid', 'nomination'],
      ['pending', 'invoice'],
    ]) {
      const expected = await t.ds.query(
        `SELECT id FROM documents WHERE tenant_id = $1 AND status = $2 AND document_type = $3 ORDER BY created_at DESC, id DESC`,
        [a.id, status, type],
      );
      expect(expected.length).toBeGreaterThan(0);
      const { items } = await walk(`limit=7&status=${status}&document_type=${type}`);
      expect(items.map((d) => d.id)).toEqual(expected.map((r: { id: string }) => r.id));
      expect(items.every((d) => d.status === status && d.document_type === type)).toBe(true);
    }
  });

  const forged = Buffer.from(JSON.stringify({ t: '2026-01-01T00:00:00.000Z', id: 'x', extra: true })).toString(
    'base64url',
  );
  it.each([
    ['limit=101', 'limit'],
    ['limit=0', 'limit'],
    ['limit=abc', 'limit'],
    ['status=archived', 'status'],
    [`cursor=${forged}`, 'cursor'],
    ['cursor=not-a-cursor!', 'cursor'],
    ['cursor=eyJ0IjoxfQ', 'cursor'],
    ['unknown=1', 'unknown'],
  ])('answers 400 for %s', async (query, param) => {
    const res = await t.http().get(`/list?${query}`).set('X-API-Key', a.apiKey).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(res.body.error.details)).toContain(param);
  });

  describe("tenant B's credentials on tenant A's documents", () => {
    const endpoints: [string, 'get' | 'delete' | 'post', (id: string) => string][] = [
      ['GET /sdf/:id', 'get', (id) => `/sdf/${id}`],
      ['GET /download/:id', 'get', (id) => `/download/${id}`],
      ['GET /meta/:id', 'get', (id) => `/meta/${id}`],
      ['GET /data/:id', 'get', (id) => `/data/${id}`],
      ['DELETE /delete/:id', 'delete', (id) => `/delete/${id}`],
      ['DELETE /sdf/:id', 'delete', (id) => `/sdf/${id}`],
    ];
    const credentials: [string, (t: TestApp) => Record<string, string>][] = [
      ['API key', () => ({ 'X-API-Key': b.apiKey })],
      ['tenant JWT', (t) => ({ Authorization: `Bearer ${t.tenantToken(b.id)}` })],
    ];

    it.each(
      endpoints.flatMap(([name, method, path]) =>
        credentials.map(([cred, headers]) => [name, cred, method, path, headers] as const),
      ),
    )('%s with an %s is 404 like a missing document', async (_name, _cred, method, path, headers) => {
      const res = await t.http()[method](path(ids[0]!)).set(headers(t)).expect(404);
      expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: 'Document not found', details: [] } });
      // Exactly the answer for an id that exists nowhere.
      const missing = await t.http()[method](path('00000000-0000-4000-8000-000000000000')).set(headers(t)).expect(404);
      expect(missing.body).toEqual(res.body);
    });

    it('lists none of them, on both list paths', async () => {
      for (const path of ['/list?limit=100', '/sdf?limit=100']) {
        const res = await t.http().get(path).set('X-API-Key', b.apiKey).expect(200);
        expect(res.body).toEqual({ documents: [], next_cursor: null, has_more: false });
      }
    });

    it("cannot page into A's documents with A's cursor", async () => {
      const first = await t.http().get('/list?limit=5').set('X-API-Key', a.apiKey).expect(200);
      const res = await t.http().get(`/list?cursor=${first.body.next_cursor}`).set('X-API-Key', b.apiKey).expect(200);
      expect(res.body.documents).toEqual([]);
    });

    it('left every document of A in place', async () => {
      const [{ n }] = await t.ds.query(`SELECT count(*)::int AS n FROM documents WHERE tenant_id = $1`, [a.id]);
      expect(n).toBe(250);
    });
  });
});
