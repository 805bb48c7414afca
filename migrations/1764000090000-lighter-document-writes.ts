import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Less work on every document write. `documents_tenant_id_idx` (tenant_id) duplicated the leading
 * column of `documents_tenant_page_idx` (tenant_id, created_at, id), which serves every query by
 * tenant; each insert and each status change wrote both. The outbox trigger becomes a row trigger whose
 * condition is checked without running the function: an event written dispatched (nobody awaits it,
 * the common case) no longer captures a transition table nor calls PL/pgSQL; a pending one notifies as
 * before (NOTIFY folds repeats within a transaction into one).
 */
export class LighterDocumentWrites1764000090000 implements MigrationInterface {
  name = 'LighterDocumentWrites1764000090000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS documents_tenant_id_idx`);
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
      FOR EACH ROW WHEN (NEW.dispatched_at IS NULL) EXECUTE FUNCTION outbox_events_notify()`);
  }

  async down(q: QueryRunner): Promise<void> {
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
    await q.query(`CREATE INDEX documents_tenant_id_idx ON documents (tenant_id)`);
  }
}
