import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The insert trigger on the outbox wakes the event stream's numbering (`outbox_events_new`) only while an
 * API process somewhere holds a stream open. Without one nobody waits for the numbers, and the processes
 * number the events once a second, all together; but every NOTIFY costs PostgreSQL at commit (one queue
 * for the whole cluster, and every listening session of the database woken to read it, the webhook
 * dispatchers' too), about a tenth of its CPU per upload, on every upload of an installation whose
 * streams are closed.
 *
 * A process with streams open keeps a row here (its id, and until when it holds: renewed while streams
 * are open, deleted when the last closes). A process that dies leaves a row that expires by itself; the
 * table is unlogged (no WAL for a hint that a restart may lose: the processes write it again).
 */
export class EventStreamPresence1796500000000 implements MigrationInterface {
  name = 'EventStreamPresence1796500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE UNLOGGED TABLE event_stream_presence (process_id uuid PRIMARY KEY, until timestamptz NOT NULL)`,
    );
    await q.query(`
      CREATE OR REPLACE FUNCTION outbox_events_new_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM event_stream_presence WHERE until > now()) THEN
          PERFORM pg_notify('outbox_events_new', '');
        END IF;
        RETURN NULL;
      END
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION outbox_events_new_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('outbox_events_new', '');
        RETURN NULL;
      END
      $$`);
    await q.query(`DROP TABLE event_stream_presence`);
  }
}
