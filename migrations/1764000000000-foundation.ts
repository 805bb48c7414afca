import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1764000000000 implements MigrationInterface {
  name = 'Foundation1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tenants (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        slug text NOT NULL,
        rate_limit_rpm integer NOT NULL DEFAULT 60 CHECK (rate_limit_rpm > 0),
        saml_enabled boolean NOT NULL DEFAULT false,
        saml_metadata_url text,
        saml_entity_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT tenants_slug_key UNIQUE (slug)
      )`);
    await q.query(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        key_prefix varchar(8) NOT NULL,
        key_salt text NOT NULL,
        key_hash text NOT NULL,
        name text,
        expires_at timestamptz,
        revoked_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX api_keys_key_prefix_idx ON api_keys (key_prefix)`);
    await q.query(`CREATE INDEX api_keys_tenant_id_idx ON api_keys (tenant_id)`);
    // S11: the audit log outlives what it describes, so no foreign key; retention is 7 years.
    await q.query(`
      CREATE TABLE audit_log (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid,
        action text NOT NULL,
        resource_id text,
        actor text NOT NULL,
        ip_address text,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX audit_log_tenant_created_idx ON audit_log (tenant_id, created_at DESC, id DESC)`);
    // S11: append-only is enforced by the database itself, whoever connects.
    await q.query(`
      CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'audit_log is append-only: % is not allowed', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await q.query(`
      CREATE TRIGGER audit_log_no_update_delete BEFORE UPDATE OR DELETE ON audit_log
      FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()`);
    await q.query(`
      CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
      FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_log`);
    await q.query(`DROP FUNCTION audit_log_append_only`);
    await q.query(`DROP TABLE api_keys`);
    await q.query(`DROP TABLE tenants`);
  }
}
