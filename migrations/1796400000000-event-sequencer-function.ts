import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The advisory lock that makes one numbering run at a time, across every process (as before, in the service). */
export const SEQUENCER_LOCK = 0x5df_e7e7;

/**
 * The event stream's numbering as one function, so that numbering the committed events is one statement
 * (one round trip, its own transaction) instead of a transaction of five: under load each round trip
 * waits for the API process's event loop and the pool, and the numbering was most of an event's way from
 * the worker's commit to the client. It returns the rows it numbered, in order, so the process that
 * numbered them writes them to its streams without reading them again; a process that finds the lock
 * taken gets one row whose `out_seq` is -1. The rule is the same: numbers are given after commit, under
 * the lock, in the order the events were written, and the readers are notified with the highest.
 *
 * Security invoker: it sees the rows its caller sees, and the service calls it without naming a tenant.
 */
export class EventSequencerFunction1796400000000 implements MigrationInterface {
  name = 'EventSequencerFunction1796400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION outbox_events_sequence(batch integer)
      RETURNS TABLE (out_seq bigint, out_tenant uuid, out_event text, out_payload jsonb)
      LANGUAGE plpgsql AS $$
      BEGIN
        IF NOT pg_try_advisory_xact_lock(${SEQUENCER_LOCK}) THEN
          out_seq := -1;
          RETURN NEXT;
          RETURN;
        END IF;
        RETURN QUERY
          WITH numbered AS (
            UPDATE outbox_events o SET seq = n.seq
              FROM (SELECT u.id, nextval('outbox_events_seq') AS seq
                      FROM (SELECT e.id FROM outbox_events e WHERE e.seq IS NULL
                             ORDER BY e.created_at, e.id LIMIT batch) u) n
             WHERE o.id = n.id
            RETURNING o.seq, o.tenant_id, o.event, o.payload)
          SELECT numbered.seq, numbered.tenant_id, numbered.event, numbered.payload
            FROM numbered ORDER BY numbered.seq;
        IF FOUND THEN
          -- The numbers were taken in this transaction, under the lock: the last is the highest given.
          PERFORM pg_notify('outbox_events_seq', currval('outbox_events_seq')::text);
        END IF;
      END
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION outbox_events_sequence(integer)`);
  }
}
