import type { MigrationInterface, QueryRunner } from 'typeorm';

export class SigningKeys1764000002000 implements MigrationInterface {
  name = 'SigningKeys1764000002000';

  async up(q: QueryRunner): Promise<void> {
    // S7/S8: private keys only sealed (`v<master key id>.<iv>.<tag>.<ciphertext>`); the CHECK refuses a clear PEM
    // even from a faulty writer. key_id is the RFC 7638 thumbprint, stable and unique across tenants.
    await q.query(`
      CREATE TABLE signing_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        algorithm text NOT NULL CHECK (algorithm IN ('ECDSA-P256', 'RSA-2048')),
        public_key text NOT NULL CHECK (public_key LIKE '-----BEGIN PUBLIC KEY-----%'),
        private_key_enc text NOT NULL CHECK (private_key_enc ~ '^v[A-Za-z0-9]+\\.' AND private_key_enc NOT LIKE '%PRIVATE KEY%'),
        is_active boolean NOT NULL DEFAULT true,
        key_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT signing_keys_key_id_key UNIQUE (key_id)
      )`);
    await q.query(`CREATE INDEX signing_keys_tenant_idx ON signing_keys (tenant_id, created_at DESC)`);
    // At most one active key per tenant: the one new signatures use.
    await q.query(`CREATE UNIQUE INDEX signing_keys_one_active_idx ON signing_keys (tenant_id) WHERE is_active`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE signing_keys`);
  }
}
