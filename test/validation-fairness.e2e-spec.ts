import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSdf, invoiceData } from '../src/sdf/testing/build-sdf.js';
import { startApp, type TestApp } from './helpers/app.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

/** A file whose schema pattern backtracks for ever on its data: it holds a worker for the whole budget. */
const hostile = (): Buffer =>
  buildSdf({
    schema: { type: 'object', properties: { invoice_number: { type: 'string', pattern: '^(a+)+$' } } },
    data: { ...invoiceData(), invoice_number: `${'a'.repeat(40)}!` },
  });

describe("fair validation between tenants (one tenant's hostile backlog does not hold up another)", () => {
  let t: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;

  beforeAll(async () => {
    t = await startApp({
      env: { VALIDATION_TIMEOUT_MS: '2000', VALIDATION_POOL_WORKERS: '1', VALIDATE_SDF_CONCURRENCY: '4' },
    });
    a = await createTenant(t, { rate_limit_rpm: 10_000 });
    b = await createTenant(t, { rate_limit_rpm: 10_000 });
  });
  afterAll(() => t.close());

  /** How many of the tenant's documents have been judged so far. */
  async function judged(tenantId: string): Promise<number> {
    const [row] = await t.ds.query(
      `SELECT count(*)::int AS n FROM documents WHERE tenant_id = $1 AND status <> 'pending'`,
      [tenantId],
    );
    return row.n as number;
  }

  it("answers B's POST /validate and validates B's uploads while A's 20 hostile files are queued and running", async () => {
    for (let i = 0; i < 20; i++) await upload(t, a.apiKey, hostile()).expect(201);

    const beforeValidate = await judged(a.id);
    const res = await t.http().post('/validate').set('X-API-Key', b.apiKey).attach('file', buildSdf(), 'b.sdf');
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(true);
    // Answered beside A's running file, not after A's queue: at most the file then running was judged meanwhile.
    expect((await judged(a.id)) - beforeValidate).toBeLessThanOrEqual(1);

    const beforeUploads = await judged(a.id);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push((await upload(t, b.apiKey, buildSdf()).expect(201)).body.id as string);
    for (const id of ids) expect((await waitForFinal(t, b.apiKey, id, 60_000)).body.status).toBe('valid');
    // B's jobs passed A's queue. A, alone until then, held every worker: B's first job waits for one of
    // A's files to end and free a worker, then for the file then running in the pool, and B's second
    // takes turns with A's. Of A's 20, at most four were judged meanwhile; in arrival order all would be.
    const judgedMeanwhile = (await judged(a.id)) - beforeUploads;
    expect(judgedMeanwhile).toBeLessThanOrEqual(4);
    expect(await judged(a.id)).toBeLessThan(20);
  }, 120_000);
});
