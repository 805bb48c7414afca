import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An event nobody subscribes to is written already dispatched (the insert checks the tenant's active
 * webhooks); the dispatchers are woken only by events that wait for them, read from the statement's
 * inserted rows.
 */
export class OutboxNotifyUndispatched1764000080000 implements MigrationInterface {
  name = 'OutboxNotifyUndispatched1764000080000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER outbox_events_notify ON outbox_events`);
    await q.query(`
      CREATE OR REPLACE FUNCTION outbox_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM inserted WHERE dispatched_at IS NULL) THEN
          PERFORM pg_notify('outbox_events', '');
        END IF;
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE TRIGGER outbox_events_notify AFTER INSERT ON outbox_events
      REFERENCING NEW TABLE AS inserted
      FOR EACH STATEMENT EXECUTE FUNCTION outbox_events_notify()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER outbox_events_notify ON outbox_events`);
    await q.query(`
      CREATE OR REPLACE FUNCTION outbox_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('outbox_events', '');
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE TRIGGER outbox_events_notify AFTER INSERT ON outbox_events
      FOR EACH STATEMENT EXECUTE FUNCTION outbox_events_notify()`);
  }
}
