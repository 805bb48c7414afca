import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The summary of every document (what a person knows it by: its business number, names, amount, dates
 * and the numbers it refers to, read from data.json; rule 7 keeps meta's document_id out of it) in
 * columns the list can search and filter on. `summary` is the whole summary as the API answers it; the
 * other columns are derived from it by the statements that write it. `summarized_at` is set once a
 * document has been summarized (its summary may still be null: a data.json that does not parse), so the
 * worker's backfill finds the documents stored before this migration by it being null.
 *
 * Search uses the `simple` text search configuration (business numbers and names are not words of one
 * language) and pg_trgm for fragments of numbers; ranges use B-trees. Row-level security applies to the
 * new columns as to the rest of the row.
 */
export class DocumentSummaries1796100000000 implements MigrationInterface {
  name = 'DocumentSummaries1796100000000';

  async up(q: QueryRunner): Promise<void> {
    // pg_trgm is a trusted extension: the database owner may create it.
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await q.query(`
      ALTER TABLE documents
        ADD COLUMN summary jsonb,
        ADD COLUMN summary_number text,
        ADD COLUMN summary_issuer text,
        ADD COLUMN summary_counterparty text,
        ADD COLUMN summary_amount numeric(24, 4),
        ADD COLUMN summary_currency text,
        ADD COLUMN summary_issue_date date,
        ADD COLUMN summary_due_date date,
        ADD COLUMN summary_references text[] NOT NULL DEFAULT '{}',
        ADD COLUMN summary_text text,
        ADD COLUMN summary_search tsvector,
        ADD COLUMN summarized_at timestamptz(3)`);
    await q.query(`CREATE INDEX documents_summary_search_idx ON documents USING gin (summary_search)`);
    await q.query(`CREATE INDEX documents_summary_text_trgm_idx ON documents USING gin (summary_text gin_trgm_ops)`);
    await q.query(`CREATE INDEX documents_summary_references_idx ON documents USING gin (summary_references)`);
    await q.query(`CREATE INDEX documents_summary_number_idx ON documents (tenant_id, lower(summary_number))`);
    await q.query(`CREATE INDEX documents_summary_issue_idx ON documents (tenant_id, summary_issue_date, id)`);
    await q.query(`CREATE INDEX documents_summary_due_idx ON documents (tenant_id, summary_due_date, id)`);
    await q.query(
      `CREATE INDEX documents_summary_amount_idx ON documents (tenant_id, summary_currency, summary_amount)`,
    );
    // The backfill's work list: documents judged before summaries existed.
    await q.query(
      `CREATE INDEX documents_unsummarized_idx ON documents (id) WHERE summarized_at IS NULL AND status <> 'pending'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of [
      'documents_unsummarized_idx',
      'documents_summary_amount_idx',
      'documents_summary_due_idx',
      'documents_summary_issue_idx',
      'documents_summary_number_idx',
      'documents_summary_references_idx',
      'documents_summary_text_trgm_idx',
      'documents_summary_search_idx',
    ]) {
      await q.query(`DROP INDEX IF EXISTS ${index}`);
    }
    await q.query(`
      ALTER TABLE documents
        DROP COLUMN summary, DROP COLUMN summary_number, DROP COLUMN summary_issuer, DROP COLUMN summary_counterparty,
        DROP COLUMN summary_amount, DROP COLUMN summary_currency, DROP COLUMN summary_issue_date,
        DROP COLUMN summary_due_date, DROP COLUMN summary_references, DROP COLUMN summary_text,
        DROP COLUMN summary_search, DROP COLUMN summarized_at`);
    // pg_trgm stays: other databases objects may use it.
  }
}
