import type { IncomingMessage } from 'node:http';
import type { Response } from 'supertest';
import { expect } from 'vitest';
import { SUMMARY_PARAM_COUNT, summaryParams, summarySetSql } from '../../src/documents/documents-search.js';
import type { DocumentSummary } from '../../src/sdf/summary.js';
import type { TestApp } from './app.js';

/** Uploads a file as multipart field `file`. */
export function upload(
  t: TestApp,
  apiKey: string,
  archive: Buffer,
  headers: Record<string, string> = {},
  path = '/upload',
) {
  return t.http().post(path).set('X-API-Key', apiKey).set(headers).attach('file', archive, 'file.sdf');
}

/**
 * Polls GET /sdf/:id (S1) until the status leaves `pending`; fails after `timeoutMs`. A 503 with
 * Retry-After (the service's answer while a dependency is slow to answer, on a loaded machine) is asked
 * again, as a client does; any other status fails at once.
 */
export async function waitForFinal(t: TestApp, apiKey: string, id: string, timeoutMs = 30_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.http().get(`/sdf/${id}`).set('X-API-Key', apiKey);
    if (res.status === 503 && res.headers['retry-after'] !== undefined && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (res.body.status !== 'pending') return res;
    if (Date.now() > deadline) throw new Error(`document ${id} still pending after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Binary response bodies as Buffers with supertest (`.buffer(true).parse(binary)`). */
export function binary(res: IncomingMessage, cb: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
}

/** The stored file of a document, as GET /download/:id serves it (200 expected). */
export async function downloadFile(t: TestApp, apiKey: string, id: string): Promise<Buffer> {
  const res = await t
    .http()
    .get(`/download/${id}`)
    .set('X-API-Key', apiKey)
    .buffer(true)
    .parse(binary as never)
    .expect(200);
  return res.body as Buffer;
}

/**
 * Stores the summary columns of the documents `where` selects (an SQL condition on `documents`) from
 * their `summary` column, with the validation job's own values (summaryParams) and statement fragment
 * (summarySetSql): for a corpus written as rows, which hundreds of uploads through validation would prove
 * nothing more about. `query` answers rows (a DataSource's query, or a pg client's `rows`).
 */
export async function storeSummaryColumns(
  query: (sql: string, params?: unknown[]) => Promise<unknown[]>,
  where: string,
  params: unknown[] = [],
): Promise<void> {
  const rows = (await query(`SELECT id, summary FROM documents WHERE ${where}`, params)) as {
    id: string;
    summary: DocumentSummary | null;
  }[];
  const values = rows.map(({ id, summary }) => ({
    id,
    ...Object.fromEntries(summaryParams(summary).map((value, i) => [`v${i}`, value])),
  }));
  const names = Array.from({ length: SUMMARY_PARAM_COUNT }, (_, i) => `v${i}`);
  // Every value is text but the references (an array); summarySetSql casts each to its column's type.
  const none = summaryParams(null);
  const types = names.map((name, i) => `${name} ${Array.isArray(none[i]) ? 'text[]' : 'text'}`);
  await query(
    `UPDATE documents d SET ${summarySetSql(names.map((name) => `r.${name}`))}
       FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, ${types.join(', ')}) WHERE d.id = r.id`,
    [JSON.stringify(values)],
  );
}
