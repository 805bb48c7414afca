import type { MigrationInterface, QueryRunner } from 'typeorm';

const SPEC = `'document.uploaded', 'document.validated', 'document.signed', 'document.deleted'`;
const ALL = `${SPEC}, 'document.signing_failed', 'document.erp_pushed'`;

/**
 * Two events of the service's own beside the specification's four: `document.signing_failed` (a signing
 * that ended for good without signing) and `document.erp_pushed` (an ERP push that finished). The outbox
 * may hold them and a webhook may subscribe to them; no existing webhook's list changes, so a webhook that
 * does not name them never receives them.
 */
export class ExtensionEvents1796300000000 implements MigrationInterface {
  name = 'ExtensionEvents1796300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_event_check`);
    await q.query(`ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_event_check CHECK (event IN (${ALL}))`);
    await q.query(`ALTER TABLE webhooks DROP CONSTRAINT webhooks_events_check`);
    await q.query(
      `ALTER TABLE webhooks ADD CONSTRAINT webhooks_events_check
         CHECK (cardinality(events) > 0 AND events <@ ARRAY[${ALL}]::text[])`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    // The narrower checks hold only once the new names are gone: their events, their subscriptions, and a
    // webhook that subscribed to nothing else.
    await q.query(`DELETE FROM outbox_events WHERE event NOT IN (${SPEC})`);
    await q.query(
      `UPDATE webhooks SET events = array_remove(array_remove(events, 'document.signing_failed'), 'document.erp_pushed')
        WHERE NOT events <@ ARRAY[${SPEC}]::text[]`,
    );
    await q.query(`DELETE FROM webhooks WHERE cardinality(events) = 0`);
    await q.query(`ALTER TABLE webhooks DROP CONSTRAINT webhooks_events_check`);
    await q.query(
      `ALTER TABLE webhooks ADD CONSTRAINT webhooks_events_check
         CHECK (cardinality(events) > 0 AND events <@ ARRAY[${SPEC}]::text[])`,
    );
    await q.query(`ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_event_check`);
    await q.query(`ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_event_check CHECK (event IN (${SPEC}))`);
  }
}
