import type { MigrationInterface, QueryRunner } from 'typeorm';

export class UserNames1795700000000 implements MigrationInterface {
  name = 'UserNames1795700000000';

  async up(q: QueryRunner): Promise<void> {
    // The name a person gives at sign-up or when joining, shown to their team; optional.
    await q.query(`ALTER TABLE users ADD COLUMN name text NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users DROP COLUMN name`);
  }
}
