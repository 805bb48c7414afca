import type { MigrationInterface, QueryRunner } from 'typeorm';

export class SigningError1764000030000 implements MigrationInterface {
  name = 'SigningError1764000030000';

  async up(q: QueryRunner): Promise<void> {
    // Why a sign job gave up (out of attempts); cleared when a later signing succeeds.
    await q.query(`ALTER TABLE documents ADD COLUMN signing_error jsonb NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE documents DROP COLUMN signing_error`);
  }
}
