import type { MigrationInterface, QueryRunner } from 'typeorm';

export class OutboxRetention1764000005000 implements MigrationInterface {
  name = 'OutboxRetention1764000005000';

  async up(q: QueryRunner): Promise<void> {
    // Dispatched events are deleted after OUTBOX_RETENTION_HOURS; this finds them without a scan.
    await q.query(
      `CREATE INDEX outbox_events_dispatched_idx ON outbox_events (dispatched_at) WHERE dispatched_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX outbox_events_dispatched_idx`);
  }
}
