import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ValidationError1795592151181 implements MigrationInterface {
  name = 'ValidationError1795592151181';

  async up(q: QueryRunner): Promise<void> {
    // Why a validation job gave up (out of attempts) while the document stays pending; cleared when a
    // later run settles it.
    await q.query(`ALTER TABLE documents ADD COLUMN validation_error jsonb NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE documents DROP COLUMN validation_error`);
  }
}
