import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event stream (GET /events) reads the outbox by `seq`: a number given to each event after its
 * transaction committed, by one sequencing transaction at a time (an advisory lock), so numbers become
 * visible in increasing order and a reader that saw event N has seen every committed event below N. A
 * sequence number taken at insert time would not do: a transaction that took 7 may commit after one that
 * took 8, and a reader resuming after 8 would never see 7.
 *
 * Every insert wakes the sequencers (`outbox_events_new`, folded to one notification a transaction); the
 * sequencer notifies `outbox_events_seq` with the highest number it gave, which wakes the readers.
 */
export class EventStream1796200000000 implements MigrationInterface {
  name = 'EventStream1796200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE outbox_events_seq AS bigint`);
    await q.query(`ALTER TABLE outbox_events ADD COLUMN seq bigint NULL`);
    await q.query(`CREATE UNIQUE INDEX outbox_events_seq_idx ON outbox_events (seq)`);
    await q.query(`CREATE INDEX outbox_events_tenant_seq_idx ON outbox_events (tenant_id, seq) WHERE seq IS NOT NULL`);
    await q.query(`CREATE INDEX outbox_events_unsequenced_idx ON outbox_events (created_at, id) WHERE seq IS NULL`);
    // Events already in the outbox get their numbers now, in the order they were written.
    await q.query(`
      UPDATE outbox_events o SET seq = n.seq
        FROM (SELECT id, nextval('outbox_events_seq') AS seq
                FROM (SELECT id FROM outbox_events ORDER BY created_at, id) ordered) n
       WHERE o.id = n.id`);
    await q.query(`
      CREATE OR REPLACE FUNCTION outbox_events_new_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('outbox_events_new', '');
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE TRIGGER outbox_events_new_notify AFTER INSERT ON outbox_events
      FOR EACH STATEMENT EXECUTE FUNCTION outbox_events_new_notify()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER outbox_events_new_notify ON outbox_events`);
    await q.query(`DROP FUNCTION outbox_events_new_notify()`);
    await q.query(`DROP INDEX outbox_events_unsequenced_idx`);
    await q.query(`DROP INDEX outbox_events_tenant_seq_idx`);
    await q.query(`DROP INDEX outbox_events_seq_idx`);
    await q.query(`ALTER TABLE outbox_events DROP COLUMN seq`);
    await q.query(`DROP SEQUENCE outbox_events_seq`);
  }
}
