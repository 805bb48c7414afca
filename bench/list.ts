/**
 * `GET /list` latency at 10k and at 1M documents in one tenant (rows made by SQL, not uploads), for the
 * first page, a page deep in the cursor chain, and filtered by status and by type; p50/p99 over
 * BENCH_REQUESTS requests each, and the plan PostgreSQL chose for each shape (EXPLAIN ANALYZE of the
 * very statement the service sent).
 *
 *   npm run bench:list        (BENCH_REQUESTS per shape, default 200; BENCH_SIZES, default 10000,1000000)
 *
 * Needs the local PostgreSQL and Redis; makes and drops its own database.
 */
import pg from 'pg';
import { encodeCursor } from '../src/common/cursor.js';
import { benchSetup, benchTenant, percentile, run, startInProcess } from './harness.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const SIZES = (process.env.BENCH_SIZES ?? '10000,1000000').split(',').map(Number);

// The statement the service sends for a list request, caught on its way to PostgreSQL for EXPLAIN.
let catching: { text: string; values: unknown[] }[] | undefined;
const pgQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const [q, values] = args as [string | { text: string; values?: unknown[] }, unknown[] | undefined];
  const text = typeof q === 'string' ? q : q?.text;
  if (catching && typeof text === 'string' && /FROM "?documents"?/i.test(text) && /ORDER BY/i.test(text)) {
    catching.push({ text, values: (typeof q === 'string' ? values : q.values) ?? [] });
  }
  return pgQuery.apply(this, args);
} as typeof pg.Client.prototype.query;

/** `count` documents for the tenant, one per second back from now, with a spread of statuses and types. */
async function fill(db: pg.Client, tenantId: string, count: number): Promise<void> {
  await db.query(
    `INSERT INTO documents (tenant_id, document_id, document_type, schema_id, status, is_signed, file_size_bytes,
                            storage_key, meta, created_at, updated_at)
     SELECT $1::uuid, gen_random_uuid()::text,
            (ARRAY['invoice','invoice','invoice','nomination','purchase_order'])[1 + i % 5],
            'invoice/v1',
            (ARRAY['valid','valid','valid','valid','valid','valid','valid','signed','invalid','pending'])[1 + (i * 7) % 10],
            (i * 7) % 10 = 7, 100000, 'bench/' || $1::text || '/' || i, '{}'::jsonb,
            date_trunc('milliseconds', now()) - i * interval '1 second', now()
       FROM generate_series(1, $2) AS i`,
    [tenantId, count],
  );
}

async function main(): Promise<void> {
  const setup = await benchSetup({ PROCESS_ROLE: 'api' });
  const { db } = setup;
  const { app, url } = await startInProcess(setup);
  try {
    // One tenant per size, both in the table at once, and the requests of the two interleaved: the
    // figures of both sizes see the same database, cache and machine state.
    const tenants: { size: number; id: string; auth: Record<string, string>; deep: string }[] = [];
    for (const size of SIZES) {
      const tenant = await benchTenant(url, setup.config, `List-${size}`);
      const t = { id: tenant.id, auth: { 'X-API-Key': tenant.key } };
      const started = performance.now();
      await fill(db, t.id, size);
      console.log(`${size} documents made in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      // A position in the middle of the chain, as a client that had paged halfway would hold.
      const { rows } = await db.query<{ created_at: Date; id: string }>(
        `SELECT created_at, id FROM documents WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
        [t.id, Math.floor(size / 2)],
      );
      tenants.push({ size, ...t, deep: encodeCursor({ createdAt: rows[0]!.created_at, id: rows[0]!.id }) });
    }
    await db.query(`VACUUM (ANALYZE) documents`);
    await db.query(`CHECKPOINT`);

    const shapes: [string, (deep: string) => string][] = [
      ['first page', () => '/list'],
      ['deep page', (deep) => `/list?cursor=${deep}`],
      ['status=invalid', () => '/list?status=invalid'],
      ['type=nomination', () => '/list?document_type=nomination'],
      ['status + type, deep', (deep) => `/list?status=signed&document_type=invoice&cursor=${deep}`],
    ];
    const summary: string[] = [];
    for (const [name, path] of shapes) {
      const times = new Map<number, number[]>(tenants.map((t) => [t.size, []]));
      for (let i = 0; i < REQUESTS + 10; i++) {
        for (const t of tenants) {
          const t0 = performance.now();
          const res = await fetch(url + path(t.deep), { headers: t.auth });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`${path(t.deep)} answered ${res.status}`);
          if (i >= 10) times.get(t.size)!.push(performance.now() - t0);
        }
      }
      const p50s: number[] = [];
      for (const t of tenants) {
        const sorted = times.get(t.size)!.sort((a, b) => a - b);
        p50s.push(percentile(sorted, 50));
        catching = [];
        await (await fetch(url + path(t.deep), { headers: t.auth })).arrayBuffer();
        const [statement] = catching;
        catching = undefined;
        const plan = statement
          ? (
              await db.query<{ 'QUERY PLAN': string }>(
                `EXPLAIN (ANALYZE, COSTS OFF) ${statement.text}`,
                statement.values,
              )
            ).rows
              .map((r) => r['QUERY PLAN'])
              .join('\n')
          : '(statement not seen)';
        console.log(
          `\n${name} at ${t.size}: p50 ${percentile(sorted, 50).toFixed(2)} ms, p99 ${percentile(sorted, 99).toFixed(2)} ms`,
        );
        console.log(plan.replace(/^/gm, '    '));
      }
      summary.push(
        `${name.padEnd(20)} ${p50s.map((p) => p.toFixed(2).padStart(12)).join(' | ')} | ${(p50s[p50s.length - 1]! / p50s[0]!).toFixed(2)}`,
      );
    }
    console.log(`\nshape                ${SIZES.map((s) => `p50 at ${s}`.padStart(12)).join(' | ')} | ratio`);
    for (const line of summary) console.log(line);
  } finally {
    await app.close();
    await setup.cleanup();
  }
}

run(main);
