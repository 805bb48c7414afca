import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * M3: the plan a tenant is on is decided by billing (`tenant_billing.plan_id`); `tenants.plan`, which the
 * account endpoints show, follows it in the same transaction through a trigger, so the two never differ.
 */
export class TenantPlanSync1764000060000 implements MigrationInterface {
  name = 'TenantPlanSync1764000060000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION tenant_plan_follows_billing() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE tenants SET plan = NEW.plan_id WHERE id = NEW.tenant_id AND plan IS DISTINCT FROM NEW.plan_id;
        RETURN NEW;
      END $$`);
    await q.query(`
      CREATE TRIGGER tenant_billing_plan_sync AFTER INSERT OR UPDATE OF plan_id ON tenant_billing
        FOR EACH ROW EXECUTE FUNCTION tenant_plan_follows_billing()`);
    await q.query(`UPDATE tenants t SET plan = b.plan_id FROM tenant_billing b WHERE b.tenant_id = t.id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER tenant_billing_plan_sync ON tenant_billing`);
    await q.query(`DROP FUNCTION tenant_plan_follows_billing()`);
  }
}
