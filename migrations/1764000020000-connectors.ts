import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Connectors1764000020000 implements MigrationInterface {
  name = 'Connectors1764000020000';

  async up(q: QueryRunner): Promise<void> {
    // SDF-SPEC Connector configuration; C2 names the two ERP systems. S7: credentials only sealed.
    await q.query(`
      CREATE TABLE connectors (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        erp_type text NOT NULL CHECK (erp_type IN ('SAP', 'ORACLE')),
        name text,
        base_url text NOT NULL CHECK (base_url ~ '^https?://'),
        auth_type text NOT NULL CHECK (auth_type IN ('basic', 'oauth2', 'bearer')),
        credentials_enc text NOT NULL,
        is_active boolean NOT NULL DEFAULT true,
        last_health_check timestamptz,
        health_status text NOT NULL DEFAULT 'unknown' CHECK (health_status IN ('healthy', 'unhealthy', 'unknown')),
        health_reason text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX connectors_tenant_id_idx ON connectors (tenant_id, created_at)`);
    // One push per (connector, document): a second request answers with the first (exactly once).
    await q.query(`
      CREATE TABLE erp_pushes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        connector_id uuid NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,
        document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
        erp_document_id text,
        error text,
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (connector_id, document_id)
      )`);
    await q.query(`CREATE INDEX erp_pushes_tenant_document_idx ON erp_pushes (tenant_id, document_id, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE erp_pushes`);
    await q.query(`DROP TABLE connectors`);
  }
}
