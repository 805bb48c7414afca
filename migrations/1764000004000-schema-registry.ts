import type { MigrationInterface, QueryRunner } from 'typeorm';

export class SchemaRegistry1764000004000 implements MigrationInterface {
  name = 'SchemaRegistry1764000004000';

  async up(q: QueryRunner): Promise<void> {
    // S14: schemas a tenant publishes; the id carries its major version (`invoice/v1`), `version` names a revision.
    await q.query(`
      CREATE TABLE schemas (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        schema_id text NOT NULL CHECK (schema_id ~ '^[a-z0-9][a-z0-9_-]*/v[0-9]+(\\.[0-9]+)*$' AND length(schema_id) <= 200),
        version text NOT NULL CHECK (length(version) BETWEEN 1 AND 64),
        schema jsonb NOT NULL,
        content_hash char(64) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT schemas_tenant_schema_version_key UNIQUE (tenant_id, schema_id, version)
      )`);
    // Serves "latest version of a schema id" and the newest-first list.
    await q.query(`CREATE INDEX schemas_tenant_latest_idx ON schemas (tenant_id, schema_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX schemas_tenant_created_idx ON schemas (tenant_id, created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE schemas`);
  }
}
