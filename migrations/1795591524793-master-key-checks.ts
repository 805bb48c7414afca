import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * S7: a check value per master key id (HMAC-SHA-256 of a fixed label under the key), stored beside the
 * secrets it seals, so a process started with another master key refuses instead of sealing new secrets
 * under it and failing to open the old ones. Holds no key material.
 */
export class MasterKeyChecks1795591524793 implements MigrationInterface {
  name = 'MasterKeyChecks1795591524793';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE master_key_checks (
        key_id text PRIMARY KEY,
        check_value text NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE master_key_checks`);
  }
}
