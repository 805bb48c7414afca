import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Outbox1764000000001 implements MigrationInterface {
  name = 'Outbox1764000000001';

  async up(q: QueryRunner): Promise<void> {
    // Events are written in the same transaction as the change that causes them; a dispatcher hands
    // them to the webhook queue afterwards, so nothing is lost between the database and Redis.
    await q.query(`
      CREATE TABLE outbox_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        event text NOT NULL CHECK (event IN ('document.uploaded', 'document.validated', 'document.signed', 'document.deleted')),
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        dispatched_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX outbox_events_pending_idx ON outbox_events (created_at, id) WHERE dispatched_at IS NULL`,
    );
    await q.query(`CREATE INDEX outbox_events_tenant_idx ON outbox_events (tenant_id, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE outbox_events`);
  }
}
