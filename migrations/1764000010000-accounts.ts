import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Managed deployment (M1, M2): users, sessions, single-use mail tokens, TOTP recovery codes, the tenant's plan. */
export class Accounts1764000010000 implements MigrationInterface {
  name = 'Accounts1764000010000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE tenants ADD COLUMN plan text NOT NULL DEFAULT 'free'
        CHECK (plan IN ('free', 'developer', 'team', 'business', 'enterprise'))`);
    await q.query(`
      CREATE TABLE users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        email text NOT NULL,
        password_hash text,
        role text NOT NULL DEFAULT 'member' CHECK (role IN ('owner', 'admin', 'member')),
        email_verified boolean NOT NULL DEFAULT false,
        totp_enabled boolean NOT NULL DEFAULT false,
        totp_secret text,
        totp_last_step bigint,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // One account per address across the whole service, whatever its case.
    await q.query(`CREATE UNIQUE INDEX users_email_lower_key ON users (lower(email))`);
    await q.query(`CREATE INDEX users_tenant_id_idx ON users (tenant_id)`);
    // M2: never two owners; "at least one" is kept by the service (demote/remove the owner is 409).
    await q.query(`CREATE UNIQUE INDEX users_one_owner_per_tenant ON users (tenant_id) WHERE role = 'owner'`);
    await q.query(`
      CREATE TABLE sessions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        refresh_token_hash text NOT NULL,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz,
        ip_address text,
        user_agent text,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT sessions_refresh_token_hash_key UNIQUE (refresh_token_hash)
      )`);
    await q.query(`CREATE INDEX sessions_user_id_idx ON sessions (user_id)`);
    await q.query(`CREATE INDEX sessions_tenant_id_idx ON sessions (tenant_id)`);
    await q.query(`
      CREATE TABLE account_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('email_verification', 'invitation')),
        token_hash text NOT NULL,
        user_id uuid REFERENCES users(id) ON DELETE CASCADE,
        email text NOT NULL,
        role text CHECK (role IN ('admin', 'member')),
        created_by text,
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT account_tokens_token_hash_key UNIQUE (token_hash)
      )`);
    await q.query(`CREATE INDEX account_tokens_tenant_id_idx ON account_tokens (tenant_id)`);
    await q.query(`
      CREATE TABLE totp_recovery_codes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        code_hash text NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT totp_recovery_codes_user_code_key UNIQUE (user_id, code_hash)
      )`);
    await q.query(`CREATE INDEX totp_recovery_codes_tenant_id_idx ON totp_recovery_codes (tenant_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE totp_recovery_codes`);
    await q.query(`DROP TABLE account_tokens`);
    await q.query(`DROP TABLE sessions`);
    await q.query(`DROP TABLE users`);
    await q.query(`ALTER TABLE tenants DROP COLUMN plan`);
  }
}
