import type { MigrationInterface, QueryRunner } from 'typeorm';

export class TotpLock1795592522872 implements MigrationInterface {
  name = 'TotpLock1795592522872';

  async up(q: QueryRunner): Promise<void> {
    // Set when too many wrong TOTP codes locked the second factor; a recovery code clears it.
    await q.query(`ALTER TABLE users ADD COLUMN totp_locked_at timestamptz NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users DROP COLUMN totp_locked_at`);
  }
}
