import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestContext } from '../src/common/request-context.js';
import { listPageSql, SEARCH_ROLE, type AmountPlan, type SearchFilter } from '../src/documents/documents-search.js';
import { pack } from '../src/sdf/index.js';
import { buildRawSdf, buildInvalidSdf, invoiceMeta } from './helpers/sdf-fixtures.js';
import { startApp, type TestApp } from './helpers/app.js';
import { storeSummaryColumns, upload, waitForFinal } from './helpers/documents.js';
import { projectRoot } from './helpers/processes.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

interface Summary {
  title: string;
  number: string | null;
  issuer: string | null;
  counterparty: string | null;
  amount: string | null;
  currency: string | null;
  issue_date: string | null;
  due_date: string | null;
  references: string[];
}

interface Doc {
  id: string;
  tenant: string;
  type: string;
  status: string;
  created_at: string;
  summary: Summary;
}

const NAMES = ['Globex Ltd', 'Initech GmbH', 'Umbrella Corp', 'Stark Industries', 'Wayne Enterprises'];
const pad = (n: number, width: number) => String(n).padStart(width, '0');
const day = (offset: number) => new Date(Date.UTC(2026, 0, 1) + offset * 86_400_000).toISOString().slice(0, 10);

/** The corpus of one tenant: both tenants get the same numbers and names, on purpose. */
function corpus(tenant: string, issuer: string, base: number): Doc[] {
  return Array.from({ length: 150 }, (_, i) => {
    const type = ['invoice', 'purchase_order', 'nomination'][i % 3]!;
    const number = {
      invoice: `INV-2026-${pad(i, 5)}`,
      purchase_order: `PO-2026-${pad(i, 5)}`,
      nomination: `NOM-${pad(i, 5)}`,
    }[type]!;
    const references =
      type === 'invoice' ? [`PO-2026-${pad(i % 20, 5)}`] : type === 'nomination' ? [`CT-${i % 7}`] : [];
    const label = { invoice: 'Invoice', purchase_order: 'Purchase order', nomination: 'Nomination' }[type]!;
    return {
      id: randomUUID(),
      tenant,
      type,
      status: i % 4 === 3 ? 'invalid' : 'valid',
      created_at: new Date(base + i * 60_000).toISOString(),
      summary: {
        title: `${label} ${number}`,
        number,
        issuer,
        counterparty: NAMES[i % 5]!,
        amount: i % 11 === 0 ? null : (100 + i * 10).toFixed(2),
        currency: i % 11 === 0 ? null : i % 4 === 0 ? 'USD' : 'EUR',
        // Several documents share each date, so the order's tie-break shows.
        issue_date: day(Math.floor(i / 3)),
        due_date: i % 10 === 0 ? null : day(Math.floor(i / 3) + 30),
        references,
      },
    };
  });
}

describe('document summaries: stored by the validation job, searched by GET /list', () => {
  let t: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let docsA: Doc[];
  let docsB: Doc[];
  const key = (tenant: TenantFixture) => ({ 'X-API-Key': tenant.apiKey });

  beforeAll(async () => {
    t = await startApp();
    a = await createTenant(t, { rate_limit_rpm: 100_000 });
    b = await createTenant(t, { rate_limit_rpm: 100_000 });
    docsA = corpus(a.id, 'Acme GmbH', Date.UTC(2026, 5, 1));
    docsB = corpus(b.id, 'Acme GmbH', Date.UTC(2026, 5, 1) + 30_000);
    // The corpus goes in as rows (hundreds of uploads through validation would prove nothing more), with
    // the summary columns derived by the very statement fragment the validation job uses.
    const rows = [...docsA, ...docsB].map((d) => ({
      id: d.id,
      tenant_id: d.tenant,
      document_id: randomUUID(),
      document_type: d.type,
      status: d.status,
      created_at: d.created_at,
      summary: d.summary,
    }));
    await t.ds.query(
      `INSERT INTO documents (id, tenant_id, document_id, document_type, status, file_size_bytes, storage_key, meta,
                              created_at, summary)
       SELECT r.id, r.tenant_id, r.document_id, r.document_type, r.status, 1000, 'corpus/' || r.id, '{}'::jsonb,
              r.created_at, r.summary
         FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, tenant_id uuid, document_id text, document_type text,
              status text, created_at timestamptz, summary jsonb)`,
      [JSON.stringify(rows)],
    );
    await storeSummaryColumns((sql, params) => t.ds.query(sql, params), `storage_key LIKE 'corpus/%'`);
  }, 120_000);
  afterAll(() => t?.close());

  async function walk(query: string, tenant = a, limit = 7): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 200; pages++) {
      const res = await t
        .http()
        .get(`/list?limit=${limit}&${query}${cursor ? `&cursor=${cursor}` : ''}`)
        .set(key(tenant));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      ids.push(...(res.body.documents as { id: string }[]).map((d) => d.id));
      if (!res.body.has_more) return ids;
      cursor = res.body.next_cursor as string;
    }
    throw new Error('too many pages');
  }

  const text = (d: Doc) =>
    [d.summary.number, d.summary.issuer, d.summary.counterparty, ...d.summary.references].join(' ').toLowerCase();
  const matches = (q: string) => (d: Doc) =>
    q
      .toLowerCase()
      .split(/\s+/)
      .every((w) => text(d).includes(w));
  const newestFirst = (x: Doc, y: Doc) => (x.created_at < y.created_at ? 1 : x.created_at > y.created_at ? -1 : 0);
  const idsOf = (docs: Doc[]) => docs.map((d) => d.id);

  describe('the summary of uploaded files (real upload and validation)', () => {
    const example = (name: string, file: string) =>
      JSON.parse(readFileSync(join(projectRoot, 'examples', name, file), 'utf8')) as Record<string, unknown>;
    const packed = async (name: string) =>
      (
        await pack({
          data: example(name, 'data.json'),
          schema: example(name, 'schema.json'),
          meta: example(name, 'meta.json') as never,
        })
      ).archive;

    it('the three example types get their summaries, in GET /sdf/:id and in the list', async () => {
      const expected: Record<string, Summary> = {
        invoice: {
          title: 'Invoice INV-2026-00142',
          number: 'INV-2026-00142',
          issuer: 'Acme GmbH',
          counterparty: 'Globex Ltd',
          amount: '1713.60',
          currency: 'EUR',
          issue_date: '2026-03-15',
          due_date: '2026-04-14',
          references: ['PO-2026-0815'],
        },
        'purchase-order': {
          title: 'Purchase order PO-2026-0815',
          number: 'PO-2026-0815',
          issuer: 'Globex Ltd',
          counterparty: 'Acme GmbH',
          amount: '1440.00',
          currency: 'EUR',
          issue_date: '2026-03-02',
          due_date: '2026-03-20',
          references: [],
        },
        nomination: {
          title: 'Nomination 80000815',
          number: '80000815',
          issuer: 'Acme Energy Trading GmbH',
          counterparty: null,
          amount: null,
          currency: null,
          issue_date: '2026-03-15',
          due_date: '2026-03-16',
          references: [],
        },
      };
      const tenant = await createTenant(t);
      for (const [name, summary] of Object.entries(expected)) {
        const res = await upload(t, tenant.apiKey, await packed(name)).expect(201);
        expect(res.body.summary).toBeNull();
        const final = await waitForFinal(t, tenant.apiKey, res.body.id as string);
        expect(final.body.status).toBe('valid');
        expect(final.body.summary).toEqual(summary);
      }
      const list = await t.http().get('/list').set(key(tenant)).expect(200);
      expect((list.body.documents as { summary: Summary }[]).map((d) => d.summary.title).sort()).toEqual([
        'Invoice INV-2026-00142',
        'Nomination 80000815',
        'Purchase order PO-2026-0815',
      ]);
      // The invoice is found by the order it bills, and the order by its number, first.
      const byRef = await t.http().get('/list?references=PO-2026-0815').set(key(tenant)).expect(200);
      expect(byRef.body.documents.map((d: { summary: Summary }) => d.summary.number)).toEqual(['INV-2026-00142']);
      const byQ = await t.http().get('/sdf?q=PO-2026-0815').set(key(tenant)).expect(200);
      expect(byQ.body.documents.map((d: { summary: Summary }) => d.summary.number)).toEqual([
        'PO-2026-0815',
        'INV-2026-00142',
      ]);
    });

    it('an invalid file whose data.json parses gets a summary; one whose data.json does not gets none and still lists', async () => {
      const tenant = await createTenant(t);
      const mismatch = await upload(t, tenant.apiKey, buildInvalidSdf()).expect(201);
      const broken = await upload(
        t,
        tenant.apiKey,
        buildRawSdf({
          meta: { ...invoiceMeta(), document_id: randomUUID() },
          entries: { 'data.json': Buffer.from('{"invoice_number": "INV-1", ') },
        }),
      ).expect(201);
      const judged = await waitForFinal(t, tenant.apiKey, mismatch.body.id as string);
      expect(judged.body.status).toBe('invalid');
      expect(judged.body.validation.error.code).toBe('SDF_ERROR_SCHEMA_MISMATCH');
      expect(judged.body.summary).toMatchObject({
        // invoice_number 42 breaks the schema (a number, not a string) and is still the number it names.
        title: 'Invoice 42',
        number: '42',
        issuer: 'Acme Supplies GmbH',
        amount: '1713.60',
        currency: 'EUR',
        issue_date: '2026-03-15',
      });
      const unreadable = await waitForFinal(t, tenant.apiKey, broken.body.id as string);
      expect(unreadable.body.status).toBe('invalid');
      expect(unreadable.body.summary).toBeNull();
      const list = await t.http().get('/list').set(key(tenant)).expect(200);
      const items = list.body.documents as { id: string; summary: Summary | null }[];
      expect(items.map((d) => d.id).sort()).toEqual([mismatch.body.id, broken.body.id].sort());
      expect(items.find((d) => d.id === broken.body.id)!.summary).toBeNull();
    });
  });

  describe('search over a corpus of two tenants sharing numbers and names', () => {
    it("an exact number comes first; only the tenant's own document", async () => {
      const target = docsA.find((d) => d.summary.number === 'PO-2026-00010')!;
      const ids = await walk('q=po-2026-00010');
      expect(ids[0]).toBe(target.id);
      // Then the invoices that name it, then nothing of tenant B.
      const naming = docsA.filter((d) => d.summary.references.includes('PO-2026-00010'));
      expect(ids.slice(1, 1 + naming.length).sort()).toEqual(idsOf(naming).sort());
      expect(ids.sort()).toEqual(idsOf(docsA.filter(matches('po-2026-00010'))).sort());
      const inB = await walk('q=PO-2026-00010', b);
      expect(inB[0]).toBe(docsB.find((d) => d.summary.number === 'PO-2026-00010')!.id);
      expect(inB.some((id) => docsA.some((d) => d.id === id))).toBe(false);
    });

    it('a number fragment, a counterparty word, several words', async () => {
      for (const q of ['0004', 'globex', 'GLOBEX 0012', 'initech po-2026', 'ct-3']) {
        const ids = await walk(`q=${encodeURIComponent(q)}&sort=uploaded`);
        expect(ids, q).toEqual(idsOf(docsA.filter(matches(q)).sort(newestFirst)));
        expect(ids.length, q).toBeGreaterThan(0);
      }
    });

    it('filters: counterparty, amount range with currency, issue and due ranges, references; combined with status and type', async () => {
      const cases: [string, (d: Doc) => boolean][] = [
        ['counterparty=umbrella', (d) => d.summary.counterparty === 'Umbrella Corp'],
        [
          'amount_min=500&amount_max=900.50&currency=EUR',
          (d) => d.summary.currency === 'EUR' && Number(d.summary.amount) >= 500 && Number(d.summary.amount) <= 900.5,
        ],
        ['currency=USD', (d) => d.summary.currency === 'USD'],
        [
          'issued_from=2026-01-10&issued_to=2026-01-20',
          (d) => d.summary.issue_date! >= '2026-01-10' && d.summary.issue_date! <= '2026-01-20',
        ],
        [
          'due_from=2026-03-01&due_to=2026-03-15',
          (d) =>
            d.summary.due_date !== null && d.summary.due_date >= '2026-03-01' && d.summary.due_date <= '2026-03-15',
        ],
        ['references=PO-2026-00003', (d) => d.summary.references.includes('PO-2026-00003')],
        [
          'q=globex&status=valid&document_type=invoice&amount_min=0&amount_max=100000&currency=EUR',
          (d) => matches('globex')(d) && d.status === 'valid' && d.type === 'invoice' && d.summary.currency === 'EUR',
        ],
        [
          'status=invalid&document_type=nomination&due_from=2026-02-01',
          (d) =>
            d.status === 'invalid' &&
            d.type === 'nomination' &&
            d.summary.due_date !== null &&
            d.summary.due_date >= '2026-02-01',
        ],
      ];
      for (const [query, keep] of cases) {
        const expected = idsOf(docsA.filter(keep).sort(newestFirst));
        expect(expected.length, query).toBeGreaterThan(0);
        expect(await walk(query), query).toEqual(expected);
      }
    });

    it('an amount range written for each plan (leading, combined with a text index, only checked) finds the same documents', async () => {
      const eur = (d: Doc) => d.summary.currency === 'EUR';
      const amount = (d: Doc) => (d.summary.amount === null ? null : Number(d.summary.amount));
      const within = (d: Doc, min: number, max: number) => amount(d) !== null && amount(d)! >= min && amount(d)! <= max;
      const cases: [Partial<SearchFilter>, (d: Doc) => boolean][] = [
        [{ amountMin: '500', amountMax: '900.50', currency: 'EUR' }, (d) => eur(d) && within(d, 500, 900.5)],
        [{ amountMin: '1000', currency: 'EUR' }, (d) => eur(d) && within(d, 1000, Infinity)],
        [{ amountMax: '300', currency: 'USD' }, (d) => d.summary.currency === 'USD' && within(d, -Infinity, 300)],
        [
          { q: 'globex', status: 'valid', amountMin: '0', amountMax: '100000', currency: 'EUR' },
          (d) => matches('globex')(d) && d.status === 'valid' && eur(d),
        ],
        [
          { amountMin: '400', amountMax: '1200', currency: 'EUR', dueFrom: '2026-02-01' },
          (d) => eur(d) && within(d, 400, 1200) && d.summary.due_date !== null && d.summary.due_date >= '2026-02-01',
        ],
      ];
      const plans: AmountPlan[] = ['lead', 'combine', 'filter'];
      for (const [filter, keep] of cases) {
        const expected = idsOf(docsA.filter(keep).sort(newestFirst));
        expect(expected.length, JSON.stringify(filter)).toBeGreaterThan(0);
        const byAmount = [...docsA.filter(keep)].sort((x, y) => amount(y)! - amount(x)!);
        for (const plan of plans) {
          for (const [sort, wanted] of [
            ['uploaded', expected],
            ['amount', idsOf(byAmount)],
          ] as const) {
            const f: SearchFilter = { limit: 1000, sort, order: 'desc', ...filter };
            const { sql, params } = listPageSql(a.id, f, 'keys', plan);
            const rows = (await requestContext.run({ requestId: 'amount-plan', tenantId: a.id }, () =>
              t.ds.transaction(async (m) => {
                await m.query(`SET LOCAL ROLE ${SEARCH_ROLE}`);
                return m.query(sql, params);
              }),
            )) as { id: string }[];
            expect(
              rows.map((r) => r.id),
              `${plan} ${sort} ${JSON.stringify(filter)}`,
            ).toEqual(wanted);
          }
        }
      }
    });

    it('every sort, both ways, across pages; documents without the field last', async () => {
      const tie = (x: Doc, y: Doc, desc: boolean) => {
        const c = x.created_at < y.created_at ? -1 : x.created_at > y.created_at ? 1 : x.id < y.id ? -1 : 1;
        return desc ? -c : c;
      };
      const by =
        (field: (d: Doc) => number | string | null, desc: boolean) =>
        (x: Doc, y: Doc): number => {
          const [fx, fy] = [field(x), field(y)];
          if (fx === null && fy === null) return tie(x, y, desc);
          if (fx === null) return 1;
          if (fy === null) return -1;
          if (fx === fy) return tie(x, y, desc);
          return (fx < fy ? -1 : 1) * (desc ? -1 : 1);
        };
      const fields: Record<string, (d: Doc) => number | string | null> = {
        issue_date: (d) => d.summary.issue_date,
        due_date: (d) => d.summary.due_date,
        amount: (d) => (d.summary.amount === null ? null : Number(d.summary.amount)),
        uploaded: (d) => d.created_at,
      };
      for (const [sort, field] of Object.entries(fields)) {
        for (const order of ['asc', 'desc'] as const) {
          const expected = idsOf([...docsA].sort(by(field, order === 'desc')));
          expect(await walk(`sort=${sort}&order=${order}`, a, 13), `${sort} ${order}`).toEqual(expected);
        }
      }
      // A cursor of one sort is refused by another.
      const first = await t.http().get('/list?limit=5&sort=amount').set(key(a)).expect(200);
      const other = await t.http().get(`/list?limit=5&sort=due_date&cursor=${first.body.next_cursor}`).set(key(a));
      expect(other.status).toBe(400);
    });

    it('relevance across pages: exact number, then naming it, then numbers starting with it, holding it, the rest', async () => {
      const score = (q: string) => (d: Doc) => {
        const number = (d.summary.number ?? '').toLowerCase();
        if (number === q) return 4;
        if (d.summary.references.some((r) => r.toLowerCase() === q)) return 3;
        if (number.startsWith(q)) return 2;
        return number.includes(q) ? 1 : 0;
      };
      for (const q of ['po-2026-00010', '0001', 'po-2026-0001']) {
        const rank = score(q);
        const expected = docsA
          .filter(matches(q))
          .sort((x, y) => rank(y) - rank(x) || newestFirst(x, y) || (x.id < y.id ? 1 : -1));
        expect(new Set(expected.map(rank)).size, q).toBeGreaterThan(1);
        // A q with a digit is ranked by default; asked for explicitly, the same order.
        expect(await walk(`q=${q}`, a, 3), q).toEqual(idsOf(expected));
        expect(await walk(`q=${q}&sort=relevance`, a, 4), q).toEqual(idsOf(expected));
      }
      // Words alone (no digit): newest first by default.
      expect(await walk('q=umbrella', a, 9)).toEqual(idsOf(docsA.filter(matches('umbrella')).sort(newestFirst)));
    });

    it("another tenant's documents never appear, whatever the query", async () => {
      const idsB = new Set(idsOf(docsB));
      for (const query of ['q=globex', 'q=INV-2026-00003', 'references=PO-2026-00001', 'sort=amount', 'currency=EUR']) {
        const ids = await walk(query, a, 100);
        expect(ids.length, query).toBeGreaterThan(0);
        expect(
          ids.filter((id) => idsB.has(id)),
          query,
        ).toEqual([]);
      }
      // As the application role with the tenant named (row-level security), B's rows are not even visible.
      const seen = (await requestContext.run({ requestId: 'search-test', tenantId: a.id }, () =>
        t.ds.transaction((m) =>
          m.query(`SELECT id FROM documents WHERE summary_search @@ plainto_tsquery('simple', 'globex')`),
        ),
      )) as { id: string }[];
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.filter((r) => idsB.has(r.id))).toEqual([]);
      const [who] = (await t.ds.query(`SELECT current_user AS name`)) as { name: string }[];
      expect(who!.name).toBe('sdf_app');
    });
  });

  describe('hostile queries', () => {
    it('answer 200 or 400, never 500, and match literally', async () => {
      const tenant = await createTenant(t, { rate_limit_rpm: 100_000 });
      const odd = `A&B|C!(x):*\\'"%_ <-> 7`;
      const plain = { id: randomUUID(), number: 'PLAIN-1' };
      const special = { id: randomUUID(), number: odd };
      for (const d of [plain, special]) {
        await t.ds.query(
          `INSERT INTO documents (id, tenant_id, document_id, document_type, status, file_size_bytes, storage_key, meta, summary)
           VALUES ($1, $2, $3, 'invoice', 'valid', 1, $5, '{}', $4)`,
          [
            d.id,
            tenant.id,
            randomUUID(),
            JSON.stringify({ title: 'x', number: d.number, references: [] }),
            `hostile/${d.id}`,
          ],
        );
        await storeSummaryColumns((sql, params) => t.ds.query(sql, params), 'id = $1', [d.id]);
      }
      const search = (q: string) => t.http().get('/list').query({ q }).set(key(tenant));
      const hostile = [
        "'",
        '"',
        '&',
        '|',
        '!',
        ':*',
        '()',
        '\\',
        '\\\\',
        'a & b | !c',
        "') OR 1=1 --",
        '%',
        '_',
        '\u0000',
        'x\u0000y',
        '\ud800',
        '<->',
        'A&B|C!(x):*',
        ' '.repeat(150),
        'x'.repeat(201),
        Array.from({ length: 25 }, (_, i) => `w${i}`).join(' '),
      ];
      for (const q of hostile) {
        const res = await search(q);
        expect([200, 400], JSON.stringify(q.slice(0, 40))).toContain(res.status);
        if (res.status === 400) expect(res.body.error.details[0].path).toBe('/q');
      }
      expect((await search('x'.repeat(201))).status).toBe(400);
      // Thousands of words: past 200 characters, 400; a URL past the server's header limit is 431, never 500.
      const words = await t
        .http()
        .get(`/list?q=${'w+'.repeat(6_000)}`)
        .set(key(tenant));
      expect(words.status).toBe(400);
      expect(words.body.error.details[0].path).toBe('/q');
      const tenThousand = await t
        .http()
        .get(`/list?q=${'w+'.repeat(10_000)}`)
        .set(key(tenant));
      expect([400, 431]).toContain(tenThousand.status);
      expect((await search('x'.repeat(200))).status).toBe(200);
      // Literal: the special characters match themselves, and only where they are.
      const found = async (q: string) =>
        ((await search(q).expect(200)).body.documents as { id: string }[]).map((d) => d.id);
      expect(await found('%')).toEqual([special.id]);
      expect(await found('_')).toEqual([special.id]);
      expect(await found('\\')).toEqual([special.id]);
      expect(await found(odd)).toEqual([special.id]);
      expect(await found('A&B|C!(x):*')).toEqual([special.id]);
      expect(await found('plain')).toEqual([plain.id]);
      expect(await found('%plain')).toEqual([]);
    });

    it('a malformed filter answers 400 naming it', async () => {
      const cases: [string, string][] = [
        ['amount_min=abc&currency=EUR', '/amount_min'],
        ['amount_max=1e5&currency=EUR', '/amount_max'],
        ['amount_min=10', '/currency'],
        ['currency=euro', '/currency'],
        ['issued_from=2026-02-30', '/issued_from'],
        ['issued_to=yesterday', '/issued_to'],
        ['due_from=0000-01-01', '/due_from'],
        ['due_to=2026-13-01', '/due_to'],
        ['sort=title', '/sort'],
        ['order=up', '/order'],
        ['references=', '/references'],
        ['counterparty=', '/counterparty'],
        ['q=a&q=b', '/q'],
      ];
      for (const [query, path] of cases) {
        const res = await t.http().get(`/list?${query}`).set(key(a));
        expect(res.status, query).toBe(400);
        expect(
          (res.body.error.details as { path: string }[]).map((d) => d.path),
          query,
        ).toContain(path);
      }
    });
  });
});
