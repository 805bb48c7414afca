import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * M3: plans (seeded here), each tenant's plan and Stripe subscription, usage per billing period (the
 * record of each closed period; the open one is counted in Redis and flushed here) and the Stripe
 * events already applied (each event id is applied once).
 */
export class Billing1764000040000 implements MigrationInterface {
  name = 'Billing1764000040000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE plans (
        id text PRIMARY KEY,
        name text NOT NULL,
        rank integer NOT NULL,
        rpm integer,
        documents bigint,
        api_calls bigint,
        storage_bytes bigint,
        -- Enterprise has no values of its own: the tenant's are used.
        custom boolean NOT NULL DEFAULT false
      )`);
    // M3: Free 20, 100, 10k, 100 MB; Developer 60, 1k, 100k, 1 GB; Team 300, 10k, 1M, 10 GB;
    // Business 1,000, 100k, 10M, 100 GB (binary units: 1 MB = 1,048,576 bytes).
    await q.query(`
      INSERT INTO plans (id, name, rank, rpm, documents, api_calls, storage_bytes, custom) VALUES
        ('free', 'Free', 0, 20, 100, 10000, 104857600, false),
        ('developer', 'Developer', 1, 60, 1000, 100000, 1073741824, false),
        ('team', 'Team', 2, 300, 10000, 1000000, 10737418240, false),
        ('business', 'Business', 3, 1000, 100000, 10000000, 107374182400, false),
        ('enterprise', 'Enterprise', 4, NULL, NULL, NULL, NULL, true)`);
    await q.query(`
      CREATE TABLE tenant_billing (
        tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
        plan_id text NOT NULL REFERENCES plans(id),
        custom_documents bigint,
        custom_api_calls bigint,
        custom_storage_bytes bigint,
        stripe_customer_id text UNIQUE,
        stripe_subscription_id text,
        subscription_status text,
        current_period_start timestamptz,
        current_period_end timestamptz,
        cancel_at_period_end boolean NOT NULL DEFAULT false,
        -- created time of the newest Stripe event applied: an older one never rolls the state back.
        stripe_state_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE usage_periods (
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        period_start timestamptz NOT NULL,
        period_end timestamptz NOT NULL,
        documents_uploaded bigint NOT NULL DEFAULT 0,
        api_calls bigint NOT NULL DEFAULT 0,
        storage_bytes bigint NOT NULL DEFAULT 0,
        -- the Redis change counter at the flush that wrote this row: a stale flush never overwrites a newer one.
        seq bigint NOT NULL DEFAULT 0,
        closed_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, period_start)
      )`);
    await q.query(`
      CREATE TABLE billing_events (
        id text PRIMARY KEY,
        type text NOT NULL,
        tenant_id uuid REFERENCES tenants(id) ON DELETE SET NULL,
        event_created_at timestamptz NOT NULL,
        outcome text NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE billing_events`);
    await q.query(`DROP TABLE usage_periods`);
    await q.query(`DROP TABLE tenant_billing`);
    await q.query(`DROP TABLE plans`);
  }
}
