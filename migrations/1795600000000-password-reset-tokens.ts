import type { MigrationInterface, QueryRunner } from 'typeorm';

export class PasswordResetTokens1795600000000 implements MigrationInterface {
  name = 'PasswordResetTokens1795600000000';

  async up(q: QueryRunner): Promise<void> {
    // Forgot password: a mailed single-use link, one more kind of account token.
    await q.query(`ALTER TABLE account_tokens DROP CONSTRAINT account_tokens_kind_check`);
    await q.query(
      `ALTER TABLE account_tokens ADD CONSTRAINT account_tokens_kind_check
         CHECK (kind IN ('email_verification', 'invitation', 'password_reset'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM account_tokens WHERE kind = 'password_reset'`);
    await q.query(`ALTER TABLE account_tokens DROP CONSTRAINT account_tokens_kind_check`);
    await q.query(
      `ALTER TABLE account_tokens ADD CONSTRAINT account_tokens_kind_check
         CHECK (kind IN ('email_verification', 'invitation'))`,
    );
  }
}
