import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestContext } from '../src/common/request-context.js';
import { dataSourceOptions } from '../src/database/data-source.js';
import { amountRangeCountSql, listPageSql, PAGE_ROWS_SQL, SEARCH_ROLE } from '../src/documents/documents-search.js';
import { DocumentsRepository } from '../src/documents/documents.repository.js';
import { startApp, type TestApp } from './helpers/app.js';
import { storeSummaryColumns } from './helpers/documents.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

/** Rows per tenant: enough for the planner to prefer the trigram index to reading the table. */
const ROWS = 20_000;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}
const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

describe('search under row-level security: ids found with the indexes, rows read under the tenant policy', () => {
  let t: TestApp;
  let owner: pg.Client;
  let a: TenantFixture;
  let b: TenantFixture;
  const number = (i: number) => `INV-2026-${String((i * 7919) % 100_003).padStart(7, '0')}`;

  beforeAll(async () => {
    t = await startApp({ env: { DATABASE_APP_ROLE: 'sdf_app' } });
    owner = new pg.Client({ connectionString: t.config.env.DATABASE_URL });
    await owner.connect();
    a = await createTenant(t, { rate_limit_rpm: 100_000 });
    b = await createTenant(t, { rate_limit_rpm: 100_000 });
    // Both tenants hold the same numbers, so only the tenant condition tells their documents apart.
    for (const tenant of [a, b]) {
      await owner.query(
        `INSERT INTO documents (tenant_id, document_id, document_type, status, file_size_bytes, storage_key, meta,
                                created_at, summary)
         SELECT $1::uuid, gen_random_uuid()::text, 'invoice', 'valid', 1, 'gen/' || $1::text || '/' || i, '{}',
                now() - i * interval '1 second',
                jsonb_build_object('title', 'Invoice ' || n, 'number', n, 'counterparty', 'Globex Ltd',
                                   'amount', (i % 5000)::text, 'currency', 'EUR', 'references', jsonb_build_array('PO-' || i))
           FROM (SELECT i, 'INV-2026-' || lpad(((i * 7919) % 100003)::text, 7, '0') AS n
                   FROM generate_series(1, $2::int) i) g`,
        [tenant.id, ROWS],
      );
      // The summary columns as the validation job derives them.
      await storeSummaryColumns(async (sql, params) => (await owner.query(sql, params)).rows, 'tenant_id = $1', [
        tenant.id,
      ]);
    }
    await owner.query(`VACUUM (ANALYZE) documents`);
  }, 300_000);
  afterAll(async () => {
    await owner?.end();
    await t?.close();
  });

  /**
   * The statements the service sends for the requests `work` makes with the request id it is given: the
   * search's own, without what the service's background tasks send meanwhile (on any connection, one a
   * search used before among them).
   */
  async function statementsOf(
    work: (requestId: string) => Promise<unknown>,
  ): Promise<{ text: string; values: unknown[] }[]> {
    const requestId = `search-statements-${randomUUID()}`;
    const seen: { text: string; values: unknown[] }[] = [];
    const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const [q, values] = args as [string | { text: string; values?: unknown[] }, unknown[] | undefined];
      const text = typeof q === 'string' ? q : q?.text;
      if (requestContext.get()?.requestId === requestId && typeof text === 'string') {
        seen.push({ text, values: (typeof q === 'string' ? values : q.values) ?? [] });
      }
      return original.apply(this, args);
    } as typeof pg.Client.prototype.query;
    try {
      await work(requestId);
    } finally {
      pg.Client.prototype.query = original as typeof pg.Client.prototype.query;
    }
    return seen;
  }

  it('an exact-number search finds its document, its ids found as the search role with the trigram index', async () => {
    const wanted = number(4242);
    const statements = await statementsOf(async (requestId) => {
      const res = await t
        .http()
        .get('/list')
        .query({ q: wanted })
        .set({ 'X-API-Key': a.apiKey, 'X-Request-Id': requestId });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const found = res.body.documents as { summary: { number: string } }[];
      expect(found.map((d) => d.summary.number)).toEqual([wanted]);
    });
    const texts = statements.map((s) => s.text.trim());
    const switched = texts.indexOf(`SET LOCAL ROLE ${SEARCH_ROLE}`);
    expect(switched).toBeGreaterThanOrEqual(0);
    // The id query runs as the search role; the role is switched back before the rows are read.
    expect(texts[switched + 2]).toBe('RESET ROLE');
    expect(texts[switched + 3]).toBe(PAGE_ROWS_SQL);
    const idQuery = statements[switched + 1]!;
    expect(idQuery.text).toMatch(/FROM documents d WHERE d\.tenant_id = \$1/);
    expect(idQuery.values[0]).toBe(a.id);

    // Its plan, as the service runs it: acting for tenant A, as the search role.
    const explain = (asSearchRole: boolean) =>
      requestContext.run({ requestId: 'plan-test', tenantId: a.id }, () =>
        t.ds.transaction(async (m) => {
          if (asSearchRole) await m.query(`SET LOCAL ROLE ${SEARCH_ROLE}`);
          const [row] = (await m.query(`EXPLAIN (FORMAT JSON) ${idQuery.text}`, idQuery.values)) as {
            'QUERY PLAN': { Plan: PlanNode }[];
          }[];
          return nodes(row!['QUERY PLAN'][0]!.Plan);
        }),
      );
    const plan = await explain(true);
    expect(plan.map((n) => n['Index Name'])).toContain('documents_summary_text_trgm_idx');
    expect(plan.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'documents')).toEqual([]);
    // The same statement as the application role itself: the tenant policy keeps the trigram index unused.
    const asApp = await explain(false);
    expect(asApp.map((n) => n['Index Name'])).not.toContain('documents_summary_text_trgm_idx');
  });

  it('an amount range is counted first: a narrow one leads, a wide one is combined with a text index or only checked', async () => {
    // Each amount from 0 to 4,999 is held by 4 documents of each tenant.
    const cases = [
      {
        query: { amount_min: '100', amount_max: '110', currency: 'EUR' },
        form: /d\.summary_amount >= \$\d+::numeric AND d\.summary_amount <= \$\d+::numeric/,
        where: `summary_amount BETWEEN 100 AND 110`,
      },
      {
        query: { q: 'globex', amount_min: '0', amount_max: '2999', currency: 'EUR' },
        form: /d\.summary_amount >= \(SELECT \$\d+::numeric\) AND d\.summary_amount <= \(SELECT \$\d+::numeric\)/,
        where: `summary_amount BETWEEN 0 AND 2999 AND summary_text LIKE '%globex%'`,
      },
      {
        query: { amount_min: '1000', amount_max: '4999', currency: 'EUR' },
        form: /CASE WHEN d\.summary_amount >= \$\d+::numeric AND d\.summary_amount <= \$\d+::numeric THEN true ELSE false END/,
        where: `summary_amount BETWEEN 1000 AND 4999`,
      },
    ];
    for (const { query, form, where } of cases) {
      const label = JSON.stringify(query);
      const { rows } = await owner.query<{ id: string }>(
        `SELECT id FROM documents WHERE tenant_id = $1 AND summary_currency = 'EUR' AND ${where}
          ORDER BY created_at DESC, id DESC LIMIT 41`,
        [a.id],
      );
      const pages: string[][] = [];
      const statements = await statementsOf(async (requestId) => {
        let cursor: string | undefined;
        for (let page = 0; page < 2; page++) {
          const res = await t
            .http()
            .get('/list')
            .query({ ...query, limit: 20, ...(cursor ? { cursor } : {}) })
            .set({ 'X-API-Key': a.apiKey, 'X-Request-Id': requestId });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          pages.push((res.body.documents as { id: string }[]).map((d) => d.id));
          cursor = res.body.next_cursor as string;
        }
      });
      // Two pages of the tenant's own documents, as the owner's plain statement finds them.
      expect(pages.flat(), label).toEqual(rows.slice(0, 40).map((r) => r.id));
      const texts = statements.map((s) => s.text.trim());
      const switched = texts.indexOf(`SET LOCAL ROLE ${SEARCH_ROLE}`);
      expect(texts[switched + 1], label).toMatch(/^SELECT count\(\*\)::int AS n FROM \(SELECT 1 FROM documents d/);
      expect(texts[switched + 2], label).toMatch(form);
      expect(texts[switched + 3], label).toBe('RESET ROLE');
    }
  });

  it('the summary indexes hold only documents with what they index, and searches still use them', async () => {
    // A pending upload has no summary yet: none of the summary indexes holds an entry for it.
    const pending = randomUUID();
    await owner.query(
      `INSERT INTO documents (id, tenant_id, document_id, document_type, status, file_size_bytes, storage_key, meta)
       VALUES ($1, $2, $3, 'invoice', 'pending', 1, $4, '{}')`,
      [pending, a.id, randomUUID(), `pending/${pending}`],
    );
    const { rows: partial } = await owner.query<{ name: string; predicate: string | null }>(
      `SELECT c.relname AS name, pg_get_expr(i.indpred, i.indrelid) AS predicate
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = 'documents'::regclass AND c.relname LIKE 'documents_summary_%' ORDER BY c.relname`,
    );
    expect(partial.map((r) => r.name)).toEqual([
      'documents_summary_amount_idx',
      'documents_summary_due_idx',
      'documents_summary_issue_idx',
      'documents_summary_references_idx',
      'documents_summary_search_idx',
      'documents_summary_text_trgm_idx',
    ]);
    for (const { name, predicate } of partial) expect(predicate, name).not.toBeNull();
    await owner.query(`DELETE FROM documents WHERE id = $1`, [pending]);

    // The plans of the id queries, as the search role acting for tenant A.
    const plan = (sql: string, params: unknown[]) =>
      requestContext.run({ requestId: 'partial-test', tenantId: a.id }, () =>
        t.ds.transaction(async (m) => {
          await m.query(`SET LOCAL ROLE ${SEARCH_ROLE}`);
          const [row] = (await m.query(`EXPLAIN (FORMAT JSON) ${sql}`, params)) as {
            'QUERY PLAN': { Plan: PlanNode }[];
          }[];
          return nodes(row!['QUERY PLAN'][0]!.Plan).map((n) => n['Index Name']);
        }),
      );
    const base = { limit: 20, sort: 'uploaded', order: 'desc' } as const;
    const references = listPageSql(a.id, { ...base, references: 'PO-4242' }, 'keys');
    expect(await plan(references.sql, references.params)).toContain('documents_summary_references_idx');
    const word = listPageSql(a.id, { ...base, sort: 'relevance', q: '4242' }, 'keys');
    expect(await plan(word.sql, word.params)).toContain('documents_summary_text_trgm_idx');
    const amount = amountRangeCountSql(a.id, { ...base, amountMin: '100', amountMax: '110', currency: 'EUR' });
    expect(await plan(amount.sql, amount.params)).toContain('documents_summary_amount_idx');
    // And the references search finds exactly the documents naming the number.
    const res = await t.http().get('/list').query({ references: 'PO-4242' }).set({ 'X-API-Key': a.apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((res.body.documents as { summary: { references: string[] } }[]).map((d) => d.summary.references)).toEqual([
      ['PO-4242'],
    ]);
  });

  it("the rows are read under the tenant policy: acting for A, B's ids by primary key return nothing", async () => {
    const { rows } = await owner.query<{ id: string }>(
      `SELECT id FROM documents WHERE tenant_id = $1 ORDER BY created_at DESC LIMIT 20`,
      [b.id],
    );
    const idsOfB = rows.map((r) => r.id);
    expect(idsOfB).toHaveLength(20);
    const read = (actingFor: string, statementTenant: string) =>
      requestContext.run({ requestId: 'wall-test', tenantId: actingFor }, () =>
        t.ds.transaction(async (m) => {
          const [me] = (await m.query(`SELECT current_user AS name`)) as { name: string }[];
          expect(me!.name).toBe('sdf_app');
          return (await m.query(PAGE_ROWS_SQL, [idsOfB, statementTenant])) as { id: string }[];
        }),
      );
    // Even with B named in the statement itself, acting for A shows none of B's rows.
    expect(await read(a.id, b.id)).toEqual([]);
    const plain = (await requestContext.run({ requestId: 'wall-test', tenantId: a.id }, () =>
      t.ds.transaction((m) => m.query(`SELECT id FROM documents WHERE id = ANY($1::uuid[])`, [idsOfB])),
    )) as unknown[];
    expect(plain).toEqual([]);
    // Acting for B, the very same statement returns them: the wall, not the statement, dropped them.
    expect((await read(b.id, b.id)).map((r) => r.id).sort()).toEqual([...idsOfB].sort());
  });

  it('the search role reads the search columns alone, writes nothing, and applies to nobody else', async () => {
    const asSearch = (sql: string) =>
      requestContext.run({ requestId: 'role-test', tenantId: a.id }, () =>
        t.ds.transaction(async (m) => {
          await m.query(`SET LOCAL ROLE ${SEARCH_ROLE}`);
          return m.query(sql);
        }),
      );
    await expect(asSearch(`SELECT meta FROM documents LIMIT 1`)).rejects.toThrow(/permission denied/);
    await expect(asSearch(`SELECT storage_key FROM documents LIMIT 1`)).rejects.toThrow(/permission denied/);
    await expect(asSearch(`UPDATE documents SET status = 'invalid'`)).rejects.toThrow(/permission denied/);
    await expect(asSearch(`SELECT id FROM tenants LIMIT 1`)).rejects.toThrow(/permission denied/);
    // The application role is no member of it, so its own statements stay under the tenant policy alone.
    const { rows } = await owner.query<{ member: boolean }>(`SELECT pg_has_role('sdf_app', $1, 'USAGE') AS member`, [
      SEARCH_ROLE,
    ]);
    expect(rows[0]!.member).toBe(false);
  });

  it('a search whose id query fails leaves the connection as the application role, named for its tenant', async () => {
    // One connection, so the statements after the failure run on the very connection it happened on.
    const ds = new DataSource(dataSourceOptions(t.config.env.DATABASE_URL, 1, 'sdf_app'));
    await ds.initialize();
    try {
      const repository = new DocumentsRepository(ds);
      const state = () =>
        requestContext.run({ requestId: 'restore-test', tenantId: a.id }, () =>
          ds.query(`SELECT current_user AS name, current_setting('app.tenant_id', true) AS tenant`),
        );
      const search = (amountMin: string) =>
        requestContext.run({ requestId: 'restore-test', tenantId: a.id }, () =>
          repository.listPage(a.id, { limit: 5, q: number(7), amountMin, sort: 'relevance', order: 'desc' }),
        );
      // A value the id query's numeric cast rejects (the HTTP layer answers 400 before it gets here).
      await expect(search('not-a-number')).rejects.toThrow(/invalid input syntax for type numeric/);
      expect(await state()).toEqual([{ name: 'sdf_app', tenant: a.id }]);
      const after = await requestContext.run({ requestId: 'restore-test', tenantId: a.id }, () =>
        ds.query(`SELECT DISTINCT tenant_id::text AS tenant FROM documents`),
      );
      expect(after).toEqual([{ tenant: a.id }]);
      // And after a search that succeeds.
      const page = await search('0');
      expect(page.rows.map((r) => r.summary?.number)).toEqual([number(7)]);
      expect(await state()).toEqual([{ name: 'sdf_app', tenant: a.id }]);
    } finally {
      await ds.destroy();
    }
  });
});
