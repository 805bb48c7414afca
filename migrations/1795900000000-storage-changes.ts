import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * M3: changes of bytes stored that PostgreSQL has committed and the usage meter (Redis) has not yet
 * counted. A signing writes its row in the transaction that settles the document, so the growth is
 * recorded exactly when it happens; the meter counts a row once (a mark beside the counter, set by the
 * same Redis script) and then deletes it. A tenant table: row-level security as every other one.
 */
export class StorageChanges1795900000000 implements MigrationInterface {
  name = 'StorageChanges1795900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE storage_changes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        -- no foreign key: a change outlives the document when it is deleted before the change is counted.
        document_id uuid NOT NULL,
        delta_bytes bigint NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX storage_changes_document_idx ON storage_changes (tenant_id, document_id)`);
    await q.query(`ALTER TABLE storage_changes ENABLE ROW LEVEL SECURITY`);
    await q.query(`ALTER TABLE storage_changes FORCE ROW LEVEL SECURITY`);
    await q.query(
      `CREATE POLICY tenant_isolation ON storage_changes
         USING (sdf_tenant_visible(tenant_id)) WITH CHECK (sdf_tenant_visible(tenant_id))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE storage_changes`);
  }
}
