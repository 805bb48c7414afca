/**
 * `GET /list` latency at 10k and at 1M documents in one tenant (rows made by SQL, not uploads), for the
 * first page, a page deep in the cursor chain, filtered by status and by type, and each search shape
 * (exact number, number fragment, counterparty word, amount range with currency, due-date range,
 * references, combined with status and type); p50/p99 over BENCH_REQUESTS requests each, with the
 * values varied from request to request, the plan PostgreSQL chose for each shape and the executor's time
 * of a request's statements (EXPLAIN ANALYZE of the very statements the service sent, each as the role
 * it ran as), the search goals beside the figures, and the size of each index per million documents.
 *
 *   npm run bench:list        (BENCH_REQUESTS per shape, default 100; BENCH_SIZES, default 10000,1000000)
 *
 * Needs the local PostgreSQL and Redis; makes and drops its own database.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { encodeCursor } from '../src/common/cursor.js';
import { SEARCH_ROLE } from '../src/documents/documents-search.js';
import { benchSetup, benchTenant, median, percentile, run, startInProcess } from './harness.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);
const SIZES = (process.env.BENCH_SIZES ?? '10000,1000000').split(',').map(Number);

/** A statement the service sent for a list request, and whether it ran as the search role. */
interface Caught {
  text: string;
  values: unknown[];
  searchRole: boolean;
}

// The statements on documents the service sends for a list request, caught on their way to PostgreSQL
// for EXPLAIN, each with the role it ran as (a search switches to the search role and back).
let catching: Caught[] | undefined;
let asSearchRole = false;
const pgQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const [q, values] = args as [string | { text: string; values?: unknown[] }, unknown[] | undefined];
  const text = typeof q === 'string' ? q : q?.text;
  if (catching && typeof text === 'string') {
    if (text.trim() === `SET LOCAL ROLE ${SEARCH_ROLE}`) asSearchRole = true;
    else if (/^(RESET ROLE|COMMIT|ROLLBACK)$/i.test(text.trim())) asSearchRole = false;
    else if (/FROM "?documents"?/i.test(text)) {
      catching.push({ text, values: (typeof q === 'string' ? values : q.values) ?? [], searchRole: asSearchRole });
    }
  }
  return pgQuery.apply(this, args);
} as typeof pg.Client.prototype.query;

/**
 * EXPLAIN ANALYZE of a caught statement as the role the service ran it as: the search role, or the
 * application role acting for the tenant (row-level security changes the plan; a superuser's would not
 * show it).
 */
async function explain(db: pg.Client, appRole: string, tenantId: string, statement: Caught): Promise<string[]> {
  await db.query('BEGIN');
  try {
    if (statement.searchRole) await db.query(`SET LOCAL ROLE ${SEARCH_ROLE}`);
    else if (appRole) await db.query(`SET LOCAL ROLE ${appRole}`);
    await db.query(`SELECT set_config('app.tenant_id', $1, true)`, [tenantId]);
    const { rows } = await db.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, COSTS OFF) ${statement.text}`,
      statement.values,
    );
    return rows.map((r) => r['QUERY PLAN']);
  } finally {
    await db.query('ROLLBACK');
  }
}

/** Counterparty names: a first word and a second word from these lists and a legal form, 1,000 in all. */
const FIRST = [
  'Acme',
  'Globex',
  'Initech',
  'Umbrella',
  'Stark',
  'Wayne',
  'Tyrell',
  'Cyberdyne',
  'Soylent',
  'Hooli',
  'Vandelay',
  'Wonka',
  'Gringotts',
  'Monarch',
  'Nakatomi',
  'Oscorp',
  'Pendant',
  'Rekall',
  'Sirius',
  'Zorg',
  'Aperture',
  'Blue Sun',
  'Dunder',
  'Ewing',
  'Fabrikam',
  'Contoso',
  'Northwind',
  'Tailspin',
  'Wingtip',
  'Litware',
  'Adventure',
  'Proseware',
  'Lucerne',
  'Margie',
  'Trey',
  'Coho',
  'Alpine',
  'Fourth',
  'Humongous',
  'Woodgrove',
];
const SECOND = ['Supplies', 'Logistics', 'Energy', 'Trading', 'Industries'];
const FORM = ['GmbH', 'AG', 'Ltd', 'S.A.', 'B.V.'];

/**
 * `count` documents for the tenant, one per second back from now, with a spread of statuses and types,
 * and their summaries: business numbers in scrambled order (no relation to the upload order), 1,000
 * counterparties, amounts from 0 to 50,000 in four currencies, issue dates over three years and due
 * dates 14 to 60 days later, invoices naming an order and nominations a contract. The summary columns
 * are derived as the service's own statement derives them (summarySetSql).
 */
async function fill(db: pg.Client, tenantId: string, count: number): Promise<void> {
  await db.query(
    `INSERT INTO documents (tenant_id, document_id, document_type, schema_id, status, is_signed, file_size_bytes,
                            storage_key, meta, created_at, updated_at, summary, summary_number, summary_issuer,
                            summary_counterparty, summary_amount, summary_currency, summary_issue_date,
                            summary_due_date, summary_references, summary_text, summary_search, summarized_at)
     SELECT $1::uuid, gen_random_uuid()::text, g.type, 'invoice/v1', g.status, g.status = 'signed', 100000,
            'bench/' || $1::text || '/' || g.i, '{}'::jsonb,
            date_trunc('milliseconds', now()) - g.i * interval '1 second', now(),
            jsonb_build_object('title', g.label || ' ' || g.number, 'number', g.number, 'issuer', 'Bench Issuer GmbH',
              'counterparty', g.counterparty, 'amount', g.amount::text, 'currency', g.currency,
              'issue_date', g.issued::text, 'due_date', g.due::text, 'references', to_jsonb(g.refs)),
            g.number, 'Bench Issuer GmbH', g.counterparty, g.amount, g.currency, g.issued, g.due, g.refs,
            lower(concat_ws(' ', g.number, 'Bench Issuer GmbH', g.counterparty, array_to_string(g.refs, ' '))),
            to_tsvector('simple', concat_ws(' ', g.number, 'Bench Issuer GmbH', g.counterparty, array_to_string(g.refs, ' '))),
            now()
       FROM (
         SELECT s.*,
                CASE s.type WHEN 'invoice' THEN 'Invoice' WHEN 'nomination' THEN 'Nomination' ELSE 'Purchase order' END
                  AS label,
                CASE s.type WHEN 'invoice' THEN 'INV-' || s.year || '-' || lpad(s.n::text, 7, '0')
                            WHEN 'nomination' THEN 'NOM-' || lpad(s.n::text, 8, '0')
                            ELSE 'PO-' || s.year || '-' || lpad(s.n::text, 7, '0') END AS number,
                CASE s.type WHEN 'invoice' THEN ARRAY['PO-' || s.year || '-' || lpad(((s.n * 3) % $2)::text, 7, '0')]
                            WHEN 'nomination' THEN ARRAY['CT-' || (s.n % 5000)]
                            ELSE ARRAY[]::text[] END AS refs,
                s.issued + CASE s.type WHEN 'nomination' THEN 1 ELSE (ARRAY[14, 30, 45, 60])[1 + s.i % 4] END AS due
           FROM (
             SELECT i,
                    (i::bigint * 7919) % $2 + 1 AS n,
                    2020 + (i * 13) % 7 AS year,
                    (ARRAY['invoice','invoice','invoice','nomination','purchase_order'])[1 + i % 5] AS type,
                    (ARRAY['valid','valid','valid','valid','valid','valid','valid','signed','invalid','pending'])[1 + (i * 7) % 10]
                      AS status,
                    ($3::text[])[1 + (i * 31) % 40] || ' ' || ($4::text[])[1 + (i * 17) % 5] || ' ' ||
                      ($5::text[])[1 + (i / 40) % 5] AS counterparty,
                    ((i::bigint * 104729) % 5000000) / 100.0 AS amount,
                    (ARRAY['EUR','EUR','EUR','USD','USD','GBP','CHF'])[1 + (i * 11) % 7] AS currency,
                    date '2023-01-01' + (i * 193) % 1100 AS issued
               FROM generate_series(1, $2) AS i) s) g`,
    [tenantId, count, FIRST, SECOND, FORM],
  );
}

/** The index definitions on documents other than the primary key: dropped while rows are made, then made again. */
async function dropIndexes(db: pg.Client): Promise<string[]> {
  const { rows } = await db.query<{ name: string; def: string }>(
    `SELECT i.indexname AS name, i.indexdef AS def FROM pg_indexes i
      WHERE i.tablename = 'documents' AND i.schemaname = current_schema()
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
  );
  for (const { name } of rows) await db.query(`DROP INDEX ${name}`);
  return rows.map((r) => r.def);
}

interface Goal {
  /** p50 at 1M at most this many ms. */
  p50At1M: number;
  /** p50 at 1M at most this many times its 10k figure. */
  ratio?: number;
}

interface Sizes {
  size: number;
  id: string;
  auth: Record<string, string>;
  deep: string;
  /** Numbers, counterparty first words and references of documents of this tenant, picked at random. */
  numbers: string[];
  references: string[];
}

const WORDS = FIRST.filter((w) => !w.includes(' ')).map((w) => w.toLowerCase());
const day = (offset: number) => new Date(Date.UTC(2023, 0, 1) + offset * 86_400_000).toISOString().slice(0, 10);
const CURRENCIES = ['EUR', 'USD', 'GBP', 'CHF'];

/** Each shape's path for the k-th request: the values vary from request to request. */
const SHAPES: { name: string; path: (t: Sizes, k: number) => string; goal?: Goal }[] = [
  { name: 'first page', path: () => '/list' },
  { name: 'deep page', path: (t) => `/list?cursor=${t.deep}` },
  { name: 'status=invalid', path: () => '/list?status=invalid' },
  { name: 'type=nomination', path: () => '/list?document_type=nomination' },
  { name: 'status + type, deep', path: (t) => `/list?status=signed&document_type=invoice&cursor=${t.deep}` },
  {
    name: 'q: exact number',
    path: (t, k) => `/list?q=${encodeURIComponent(t.numbers[k % t.numbers.length]!)}`,
    goal: { p50At1M: 20, ratio: 1.3 },
  },
  {
    name: 'q: number fragment',
    path: (t, k) => `/list?q=${t.numbers[k % t.numbers.length]!.slice(-5)}`,
    goal: { p50At1M: 100 },
  },
  {
    name: 'q: counterparty word',
    path: (_t, k) => `/list?q=${WORDS[k % WORDS.length]}`,
    goal: { p50At1M: 20, ratio: 1.3 },
  },
  {
    name: 'counterparty filter',
    path: (_t, k) => `/list?counterparty=${WORDS[k % WORDS.length]}`,
    goal: { p50At1M: 20, ratio: 1.3 },
  },
  {
    name: 'amount range + cur',
    path: (_t, k) => {
      const min = (k * 997) % 49_000;
      return `/list?amount_min=${min}&amount_max=${min + 500}&currency=${CURRENCIES[k % 4]}`;
    },
    goal: { p50At1M: 100 },
  },
  {
    name: 'due-date range',
    path: (_t, k) => `/list?due_from=${day((k * 7) % 1100)}&due_to=${day(((k * 7) % 1100) + 6)}`,
    goal: { p50At1M: 100 },
  },
  {
    name: 'references',
    path: (t, k) => `/list?references=${encodeURIComponent(t.references[k % t.references.length]!)}`,
  },
  {
    name: 'q + status/type/amt',
    path: (_t, k) => {
      const min = (k * 997) % 40_000;
      return (
        `/list?q=${WORDS[k % WORDS.length]}&status=valid&document_type=invoice` +
        `&amount_min=${min}&amount_max=${min + 10_000}&currency=EUR`
      );
    },
    goal: { p50At1M: 100 },
  },
  {
    name: 'due + status/type/amt',
    path: (_t, k) =>
      `/list?status=valid&document_type=invoice&due_from=${day((k * 7) % 1100)}&due_to=${day(((k * 7) % 1100) + 30)}` +
      `&amount_min=1000&amount_max=20000&currency=EUR`,
    goal: { p50At1M: 100 },
  },
  {
    name: 'q, sorted by due date',
    path: (_t, k) => `/list?q=${WORDS[k % WORDS.length]}&sort=due_date&order=asc`,
  },
];

async function main(): Promise<void> {
  const setup = await benchSetup({ PROCESS_ROLE: 'api' });
  const { db } = setup;
  const { app, url } = await startInProcess(setup);
  const began = performance.now();
  try {
    // One tenant per size, both in the table at once, and the requests of the two interleaved: the
    // figures of both sizes see the same database, cache and machine state. The indexes are made after
    // the rows (as a restore would), which is much faster than keeping them up to date row by row.
    const tenants: Sizes[] = [];
    const made = await Promise.all(SIZES.map((size) => benchTenant(url, setup.config, `List-${size}`)));
    const indexes = await dropIndexes(db);
    let started = performance.now();
    for (const [i, size] of SIZES.entries()) await fill(db, made[i]!.id, size);
    console.log(`${SIZES.join(' + ')} documents made in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    started = performance.now();
    // As a restore would make them: with room to sort in memory.
    await db.query(`SET maintenance_work_mem = '512MB'`);
    for (const def of indexes) await db.query(def);
    console.log(`${indexes.length} indexes made in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await db.query(`VACUUM (ANALYZE) documents`);
    await db.query(`CHECKPOINT`);
    for (const [i, size] of SIZES.entries()) {
      const id = made[i]!.id;
      // A position in the middle of the chain, as a client that had paged halfway would hold.
      const { rows } = await db.query<{ created_at: Date; id: string }>(
        `SELECT created_at, id FROM documents WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
        [id, Math.floor(size / 2)],
      );
      const picked = await db.query<{ number: string; refs: string[] }>(
        `SELECT summary_number AS number, summary_references AS refs FROM documents
          WHERE tenant_id = $1 ORDER BY random() LIMIT 200`,
        [id],
      );
      tenants.push({
        size,
        id,
        auth: { 'X-API-Key': made[i]!.key },
        deep: encodeCursor({ createdAt: rows[0]!.created_at, id: rows[0]!.id }),
        numbers: picked.rows.map((r) => r.number),
        references: picked.rows.flatMap((r) => r.refs),
      });
    }

    const summary: string[] = [];
    const verdicts: string[] = [];
    for (const shape of SHAPES) {
      const times = new Map<number, number[]>(tenants.map((t) => [t.size, []]));
      const found = new Map<number, number[]>(tenants.map((t) => [t.size, []]));
      for (let k = 0; k < REQUESTS + 10; k++) {
        for (const t of tenants) {
          const path = shape.path(t, k);
          const t0 = performance.now();
          const res = await fetch(url + path, { headers: t.auth });
          const body = (await res.json()) as { documents?: unknown[] };
          if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
          if (k >= 10) {
            times.get(t.size)!.push(performance.now() - t0);
            found.get(t.size)!.push(body.documents?.length ?? 0);
          }
        }
      }
      const p50s: number[] = [];
      const p99s: number[] = [];
      const execs: number[] = [];
      for (const t of tenants) {
        const sorted = times.get(t.size)!.sort((a, b) => a - b);
        p50s.push(percentile(sorted, 50));
        p99s.push(percentile(sorted, 99));
        // The plan of the first request's page statement (the one with ORDER BY), and the executor's own time
        // of all of a request's statements on documents, each as its role, over five requests (the HTTP figures
        // above include the request's whole path, and this machine's other work).
        const executions: number[] = [];
        let plan = '(statement not seen)';
        for (let k = 0; k < 5; k++) {
          catching = [];
          await (await fetch(url + shape.path(t, k), { headers: t.auth })).arrayBuffer();
          const statements = catching;
          catching = undefined;
          if (statements.length === 0) continue;
          let total = 0;
          for (const statement of statements) {
            const lines = await explain(db, setup.config.env.DATABASE_APP_ROLE, t.id, statement);
            if (k === 0 && /ORDER BY/i.test(statement.text)) {
              plan = `${statement.searchRole ? 'as the search role' : 'as the application role'}:\n${lines.join('\n')}`;
            }
            const time = /Execution Time: ([\d.]+) ms/.exec(lines[lines.length - 1] ?? '');
            if (time) total += Number(time[1]);
          }
          executions.push(total);
        }
        execs.push(executions.length > 0 ? median(executions) : NaN);
        const items = found.get(t.size)!;
        console.log(
          `\n${shape.name} at ${t.size} (${shape.path(t, 0)}): p50 ${percentile(sorted, 50).toFixed(2)} ms, ` +
            `p99 ${percentile(sorted, 99).toFixed(2)} ms, ${(items.reduce((a, b) => a + b, 0) / items.length).toFixed(1)} items a page`,
        );
        console.log(plan.replace(/^/gm, '    '));
      }
      const ratio = p50s[p50s.length - 1]! / p50s[0]!;
      let goal = '';
      if (shape.goal && SIZES.length === 2 && SIZES[1] === 1_000_000) {
        const { p50At1M, ratio: bound } = shape.goal;
        const met = p50s[1]! <= p50At1M && (bound === undefined || ratio <= bound);
        goal = `p50 <= ${p50At1M} ms${bound ? ` and <= ${bound}x` : ''}: ${met ? 'met' : 'MISSED'}`;
        verdicts.push(`${shape.name}: ${goal}`);
      }
      summary.push(
        `${shape.name.padEnd(22)} ${p50s.map((p) => p.toFixed(2).padStart(8)).join(' ')} ${ratio.toFixed(2).padStart(6)}` +
          ` ${p99s.map((p) => p.toFixed(2).padStart(8)).join(' ')} ${execs.map((p) => p.toFixed(2).padStart(8)).join(' ')}  ${goal}`,
      );
    }
    console.log(
      `\n${'shape'.padEnd(22)} ${SIZES.map((s) => `p50@${s}`.padStart(8)).join(' ')}  ratio ` +
        `${SIZES.map((s) => `p99@${s}`.padStart(8)).join(' ')} ${SIZES.map((s) => `sql@${s}`.padStart(8)).join(' ')}  goal`,
    );
    for (const line of summary) console.log(line);

    // What the summary columns' indexes take, per million documents in the table.
    const total = SIZES.reduce((a, b) => a + b, 0);
    const { rows: sizes } = await db.query<{ name: string; bytes: string }>(
      `SELECT c.relname AS name, pg_relation_size(c.oid)::text AS bytes FROM pg_index x
         JOIN pg_class c ON c.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
        WHERE t.relname = 'documents' ORDER BY c.relname`,
    );
    const mb = (bytes: number) => ((bytes / total) * 1e6) / 1024 / 1024;
    console.log(`\nindex sizes per million documents (${total} in the table):`);
    let summaryBytes = 0;
    for (const { name, bytes } of sizes) {
      if (name.startsWith('documents_summary')) summaryBytes += Number(bytes);
      console.log(`  ${name.padEnd(40)} ${mb(Number(bytes)).toFixed(1).padStart(8)} MB`);
    }
    console.log(`  ${'summary search indexes, together'.padEnd(40)} ${mb(summaryBytes).toFixed(1).padStart(8)} MB`);
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(`\ngoals:\n  ${verdicts.join('\n  ')}`);
    console.log(`\nload average at the end: ${load}; run took ${((performance.now() - began) / 1000).toFixed(0)} s`);
  } finally {
    await app.close();
    await setup.cleanup();
  }
}

run(main);
