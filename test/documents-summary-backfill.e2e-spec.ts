import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SummaryBackfill } from '../src/documents/jobs/summary-backfill.js';
import { invoiceData } from '../src/sdf/testing/build-sdf.js';
import { startApp, type TestApp } from './helpers/app.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { buildRawSdf, buildSdf, invoiceMeta } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';

/** The summary columns as a document stored before the migration has them. */
const FORGET = `UPDATE documents SET summary = NULL, summary_number = NULL, summary_issuer = NULL,
  summary_counterparty = NULL, summary_amount = NULL, summary_currency = NULL, summary_issue_date = NULL,
  summary_due_date = NULL, summary_references = '{}', summary_text = NULL, summary_search = NULL, summarized_at = NULL
  WHERE id = ANY($1::uuid[])`;

describe('summary backfill: documents stored before summaries existed', () => {
  let first: TestApp;
  let second: TestApp | undefined;
  let a: TenantFixture;
  let b: TenantFixture;
  const secondLog: Record<string, unknown>[] = [];

  beforeAll(async () => {
    // The first instance's backfill never runs by itself within the test (an hour apart): it is driven by hand.
    first = await startApp({
      env: { SUMMARY_BACKFILL_INTERVAL_MS: '3600000', SUMMARY_BACKFILL_BATCH: '4', READINESS_CACHE_MS: '0' },
    });
    a = await createTenant(first, { rate_limit_rpm: 100_000 });
    b = await createTenant(first, { rate_limit_rpm: 100_000 });
  }, 60_000);
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  const invoice = async (number: string) =>
    (await buildSdf({ data: { ...invoiceData(), invoice_number: number } })).archive;

  it('fills them in batches while uploads continue; restarted half way, it finishes without doing one twice', async () => {
    // Twenty judged documents over two tenants, one of them with a data.json that does not parse.
    const uploaded: { id: string; apiKey: string }[] = [];
    for (let i = 0; i < 19; i++) {
      const tenant = i % 2 ? b : a;
      const res = await upload(first, tenant.apiKey, await invoice(`BF-${i}`)).expect(201);
      uploaded.push({ id: res.body.id as string, apiKey: tenant.apiKey });
    }
    const broken = await upload(
      first,
      a.apiKey,
      buildRawSdf({
        meta: { ...invoiceMeta(), document_id: randomUUID() },
        entries: { 'data.json': Buffer.from('{"invoice_number": ') },
      }),
    ).expect(201);
    uploaded.push({ id: broken.body.id as string, apiKey: a.apiKey });
    const expected = new Map<string, unknown>();
    for (const { id, apiKey } of uploaded) {
      const final = await waitForFinal(first, apiKey, id);
      expected.set(id, final.body.summary);
    }
    expect(expected.get(uploaded[3]!.id)).toMatchObject({ title: 'Invoice BF-3', amount: '1713.60' });
    expect(expected.get(broken.body.id)).toBeNull();

    // As if stored before the migration: no summary, and not summarized.
    const ids = uploaded.map((u) => u.id);
    await first.ds.query(FORGET, [ids]);
    const ready = await first.http().get('/health/ready').expect(200);
    expect(ready.body.details).toEqual({ summary_backfill: { state: 'running', remaining: 20 } });
    const listed = await first.http().get('/list?q=BF-3').set('X-API-Key', b.apiKey).expect(200);
    expect(listed.body.documents).toEqual([]);

    // Half way: two batches of four, then this worker stops.
    const backfill = first.app.get(SummaryBackfill);
    expect(await backfill.runBatch()).toBe(4);
    expect(await backfill.runBatch()).toBe(4);
    const doneFirst = (await first.ds.query(
      `SELECT id, summarized_at FROM documents WHERE id = ANY($1::uuid[]) AND summarized_at IS NOT NULL`,
      [ids],
    )) as { id: string; summarized_at: Date }[];
    expect(doneFirst).toHaveLength(8);
    expect((await first.http().get('/health/ready')).body.details.summary_backfill).toEqual({
      state: 'running',
      remaining: 12,
    });

    // Another worker starts and finishes by itself, while uploads go on.
    second = await startApp({
      shareWith: first,
      env: { SUMMARY_BACKFILL_INTERVAL_MS: '200', SUMMARY_BACKFILL_BATCH: '4', READINESS_CACHE_MS: '0' },
      logSink: (line) => {
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (typeof entry.msg === 'string' && entry.msg.startsWith('summary backfill')) secondLog.push(entry);
      },
    });
    const during: string[] = [];
    for (let i = 0; i < 4; i++) {
      during.push((await upload(first, a.apiKey, await invoice(`NEW-${i}`)).expect(201)).body.id as string);
    }
    await waitUntil(
      async () => (await first.http().get('/health/ready')).body.details.summary_backfill.state === 'done',
      'the backfill to finish',
      60_000,
    );

    // Every document has the summary its validation gave it; the new uploads theirs from their own job.
    const rows = (await first.ds.query(`SELECT id, summary, summarized_at FROM documents WHERE id = ANY($1::uuid[])`, [
      ids,
    ])) as { id: string; summary: unknown; summarized_at: Date | null }[];
    expect(rows).toHaveLength(20);
    for (const row of rows) {
      expect(row.summarized_at).not.toBeNull();
      expect(row.summary).toEqual(expected.get(row.id));
    }
    // The first half was not done again: same time, and the second worker did exactly the rest.
    for (const { id, summarized_at } of doneFirst) {
      expect(rows.find((r) => r.id === id)!.summarized_at!.getTime()).toBe(summarized_at.getTime());
    }
    expect(backfill.summarized).toBe(8);
    expect(second.app.get(SummaryBackfill).summarized).toBe(12);
    expect(secondLog.some((e) => e.msg === 'summary backfill finished' && e.total === 12)).toBe(true);
    expect(secondLog.filter((e) => e.msg === 'summary backfill').map((e) => e.summarized)).toEqual([4, 4, 4]);
    for (const id of during) {
      const final = await waitForFinal(first, a.apiKey, id);
      expect(final.body.summary).toMatchObject({ title: expect.stringMatching(/^Invoice NEW-\d$/) });
    }

    // Found again by search, and by its own tenant only.
    const found = await first.http().get('/list?q=BF-3').set('X-API-Key', b.apiKey).expect(200);
    expect(found.body.documents.map((d: { id: string }) => d.id)).toEqual([uploaded[3]!.id]);
    const other = await first.http().get('/list?q=BF-3').set('X-API-Key', a.apiKey).expect(200);
    expect(other.body.documents).toEqual([]);
  }, 180_000);
});
