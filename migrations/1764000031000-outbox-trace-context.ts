import type { MigrationInterface, QueryRunner } from 'typeorm';

export class OutboxTraceContext1764000031000 implements MigrationInterface {
  name = 'OutboxTraceContext1764000031000';

  async up(q: QueryRunner): Promise<void> {
    // The trace of the change that recorded the event, so its webhook deliveries join that trace.
    await q.query(`ALTER TABLE outbox_events ADD COLUMN trace_metadata text NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox_events DROP COLUMN trace_metadata`);
  }
}
