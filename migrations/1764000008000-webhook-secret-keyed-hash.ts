import type { MigrationInterface, QueryRunner } from 'typeorm';

export class WebhookSecretKeyedHash1764000008000 implements MigrationInterface {
  name = 'WebhookSecretKeyedHash1764000008000';

  async up(q: QueryRunner): Promise<void> {
    // S7: secret_hash becomes a keyed hash, `v<master key id>.<hex HMAC-SHA-256>`; a plain SHA-256 of a
    // person-chosen secret could be guessed offline from a dump. A migration holds no master key, so it
    // clears the plain digests here (none survives the migration) and the service recomputes each
    // hash from the sealed secret when it starts (WebhookSecretHashes).
    await q.query(`ALTER TABLE webhooks DROP CONSTRAINT webhooks_secret_hash_check`);
    await q.query(`ALTER TABLE webhooks ALTER COLUMN secret_hash DROP NOT NULL`);
    await q.query(`UPDATE webhooks SET secret_hash = NULL WHERE secret_hash !~ '^v[A-Za-z0-9]{1,16}\\.'`);
    await q.query(`
      ALTER TABLE webhooks ADD CONSTRAINT webhooks_secret_hash_check
        CHECK (secret_hash IS NULL OR secret_hash ~ '^v[A-Za-z0-9]{1,16}\\.[0-9a-f]{64}$')`);
  }

  async down(q: QueryRunner): Promise<void> {
    // The plain digests cannot be recomputed without the secrets (nothing reads the column): an
    // all-zero placeholder restores the former shape.
    await q.query(`ALTER TABLE webhooks DROP CONSTRAINT webhooks_secret_hash_check`);
    await q.query(`UPDATE webhooks SET secret_hash = repeat('0', 64)`);
    await q.query(`ALTER TABLE webhooks ALTER COLUMN secret_hash SET NOT NULL`);
    await q.query(
      `ALTER TABLE webhooks ADD CONSTRAINT webhooks_secret_hash_check CHECK (secret_hash ~ '^[0-9a-f]{64}$')`,
    );
  }
}
