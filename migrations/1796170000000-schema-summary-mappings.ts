import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A tenant's summary mapping registered with a schema version: where the documents made against that
 * schema keep their business number, counterparty, amount, dates and references (JSON pointers into
 * data.json). Checked when registered; null when the schema was registered without one. A registered
 * version never changes, nor does its mapping.
 */
export class SchemaSummaryMappings1796170000000 implements MigrationInterface {
  name = 'SchemaSummaryMappings1796170000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE schemas ADD COLUMN summary_mapping jsonb
        CHECK (summary_mapping IS NULL OR (jsonb_typeof(summary_mapping) = 'object' AND pg_column_size(summary_mapping) <= 65536))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE schemas DROP COLUMN summary_mapping`);
  }
}
