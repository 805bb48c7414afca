import type { MigrationInterface, QueryRunner } from 'typeorm';

export class SessionFirstUse1796150000000 implements MigrationInterface {
  name = 'SessionFirstUse1796150000000';

  async up(q: QueryRunner): Promise<void> {
    // The sign-in a session began with, carried over by every rotation (created_at is the last renewal),
    // so a person can tell their sessions apart by when each began as well as by when it was last used.
    await q.query(`ALTER TABLE sessions ADD COLUMN signed_in_at timestamptz NULL`);
    await q.query(`UPDATE sessions SET signed_in_at = created_at`);
    await q.query(`ALTER TABLE sessions ALTER COLUMN signed_in_at SET DEFAULT now()`);
    await q.query(`ALTER TABLE sessions ALTER COLUMN signed_in_at SET NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions DROP COLUMN signed_in_at`);
  }
}
