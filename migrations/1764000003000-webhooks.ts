import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Webhooks1764000003000 implements MigrationInterface {
  name = 'Webhooks1764000003000';

  async up(q: QueryRunner): Promise<void> {
    // S7: HMAC needs the secret itself, so it is kept encrypted (secret_enc) beside its SHA-256 (secret_hash).
    await q.query(`
      CREATE TABLE webhooks (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        url text NOT NULL CHECK (url ~ '^https?://'),
        secret_enc text NOT NULL,
        secret_hash text NOT NULL CHECK (secret_hash ~ '^[0-9a-f]{64}$'),
        events text[] NOT NULL CHECK (
          cardinality(events) > 0
          AND events <@ ARRAY['document.uploaded', 'document.validated', 'document.signed', 'document.deleted']::text[]
        ),
        is_active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhooks_tenant_id_idx ON webhooks (tenant_id, created_at)`);
    // Wakes the outbox dispatchers as soon as an event commits (NOTIFY is delivered at commit, to every
    // listening process); polling remains the safety net.
    await q.query(`
      CREATE FUNCTION outbox_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('outbox_events', '');
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE TRIGGER outbox_events_notify AFTER INSERT ON outbox_events
      FOR EACH STATEMENT EXECUTE FUNCTION outbox_events_notify()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER outbox_events_notify ON outbox_events`);
    await q.query(`DROP FUNCTION outbox_events_notify()`);
    await q.query(`DROP TABLE webhooks`);
  }
}
