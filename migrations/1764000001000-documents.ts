import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Documents1764000001000 implements MigrationInterface {
  name = 'Documents1764000001000';

  async up(q: QueryRunner): Promise<void> {
    // created_at keeps milliseconds only: the API shows milliseconds and the S4 cursor carries them, so
    // a stored value finer than the cursor could repeat or skip a row at a page boundary.
    await q.query(`
      CREATE TABLE documents (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        document_id text NOT NULL,
        document_type text,
        schema_id text,
        sdf_version text NOT NULL DEFAULT '0.1',
        is_signed boolean NOT NULL DEFAULT false,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'valid', 'invalid', 'signed')),
        file_size_bytes bigint NOT NULL CHECK (file_size_bytes >= 0),
        signature_algorithm text CHECK (signature_algorithm IN ('ECDSA-P256', 'RSA-2048')),
        storage_key text NOT NULL,
        idempotency_key text,
        meta jsonb NOT NULL,
        validation jsonb,
        validated_at timestamptz(3),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT documents_storage_key_key UNIQUE (storage_key)
      )`);
    await q.query(`CREATE INDEX documents_tenant_id_idx ON documents (tenant_id)`);
    // S4: the list walks (created_at, id) descending within one tenant.
    await q.query(`CREATE INDEX documents_tenant_page_idx ON documents (tenant_id, created_at DESC, id DESC)`);
    // S2: a retried upload with the same Idempotency-Key finds the first record.
    await q.query(
      `CREATE UNIQUE INDEX documents_idempotency_key_idx ON documents (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    );
    // S9: the sweeper looks for documents left pending.
    await q.query(`CREATE INDEX documents_pending_idx ON documents (created_at) WHERE status = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE documents`);
  }
}
