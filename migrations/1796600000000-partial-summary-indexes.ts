import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The summary indexes hold only the documents that have what they index. A document is stored pending,
 * with no summary, and summarized when its validation job settles it: with full indexes, every upload
 * wrote a NULL (or, for the references, an empty array) into each of them at its insert, entries that no
 * search ever reads, since every condition the indexes answer is strict in its column (a NULL matches no
 * comparison, LIKE, `@@` or `@>`), so PostgreSQL proves the partial predicate from the condition itself.
 * The references are the exception: PostgreSQL cannot tell from `summary_references @> ARRAY[number]`
 * that the array is not empty, so the list states `summary_references <> '{}'` beside it (listPageSql),
 * the index's own condition.
 *
 * `documents_summary_number_idx` (tenant, lower(number)) goes: no statement filters on it (an exact number
 * is found through the trigram index by its longest run, and ranked by the number in the rows found).
 *
 * The indexes are built again in the migration's transaction, which holds off writes to documents while
 * it runs (docs/documents.md says so to operators).
 */
const PARTIAL: [name: string, definition: string][] = [
  ['documents_summary_search_idx', `USING gin (summary_search) WHERE summary_search IS NOT NULL`],
  ['documents_summary_text_trgm_idx', `USING gin (summary_text gin_trgm_ops) WHERE summary_text IS NOT NULL`],
  ['documents_summary_references_idx', `USING gin (summary_references) WHERE summary_references <> '{}'`],
  ['documents_summary_issue_idx', `(tenant_id, summary_issue_date, id) WHERE summary_issue_date IS NOT NULL`],
  ['documents_summary_due_idx', `(tenant_id, summary_due_date, id) WHERE summary_due_date IS NOT NULL`],
  ['documents_summary_amount_idx', `(tenant_id, summary_currency, summary_amount) WHERE summary_amount IS NOT NULL`],
];

/** The indexes as DocumentSummaries1796100000000 made them, for down(). */
const FULL: [name: string, definition: string][] = [
  ['documents_summary_search_idx', `USING gin (summary_search)`],
  ['documents_summary_text_trgm_idx', `USING gin (summary_text gin_trgm_ops)`],
  ['documents_summary_references_idx', `USING gin (summary_references)`],
  ['documents_summary_number_idx', `(tenant_id, lower(summary_number))`],
  ['documents_summary_issue_idx', `(tenant_id, summary_issue_date, id)`],
  ['documents_summary_due_idx', `(tenant_id, summary_due_date, id)`],
  ['documents_summary_amount_idx', `(tenant_id, summary_currency, summary_amount)`],
];

export class PartialSummaryIndexes1796600000000 implements MigrationInterface {
  name = 'PartialSummaryIndexes1796600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS documents_summary_number_idx`);
    for (const [name, definition] of PARTIAL) {
      await q.query(`DROP INDEX IF EXISTS ${name}`);
      await q.query(`CREATE INDEX ${name} ON documents ${definition}`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [name, definition] of FULL) {
      await q.query(`DROP INDEX IF EXISTS ${name}`);
      await q.query(`CREATE INDEX ${name} ON documents ${definition}`);
    }
  }
}
