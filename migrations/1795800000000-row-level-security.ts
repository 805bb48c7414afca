import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The role the service's connections act as (DATABASE_APP_ROLE): it owns nothing and is subject to every policy. */
export const APP_ROLE = 'sdf_app';

/**
 * Row-level security, the second wall between tenants. Every table with a `tenant_id` (and `tenants`
 * itself, by `id`) gets a policy: when a transaction names its tenant (`app.tenant_id`, set by the
 * service for the tenant a request or a job acts for), only that tenant's rows are seen, changed or
 * written. Row-level security is forced, so the owner is held to it too; a superuser is not (PostgreSQL
 * exempts superusers), which is why the service acts as the role below, never as the owner.
 *
 * The role `sdf_app` owns no table and cannot bypass row-level security; it gets the rights the service
 * needs on data, nothing on the schema. Creating it needs CREATEROLE: where the migrating user lacks it,
 * an operator creates it first (docs/operations.md).
 */
export class RowLevelSecurity1795800000000 implements MigrationInterface {
  name = 'RowLevelSecurity1795800000000';

  async up(q: QueryRunner): Promise<void> {
    const schema = await currentSchema(q);
    await q.query(`
      DO $$
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${APP_ROLE}') THEN
          BEGIN
            CREATE ROLE ${APP_ROLE} NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
          EXCEPTION WHEN duplicate_object THEN NULL; -- made meanwhile by a migration of another database
          END;
        END IF;
        -- The migrating user may switch to it (a superuser always can).
        IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
          EXECUTE format('GRANT ${APP_ROLE} TO %I', current_user);
        END IF;
      END $$`);
    await q.query(`GRANT USAGE ON SCHEMA ${schema} TO ${APP_ROLE}`);
    await q.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${APP_ROLE}`);
    await q.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${schema} TO ${APP_ROLE}`);
    // Tables of later migrations (and audit_log's monthly partitions) get the same rights.
    await q.query(
      `ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${APP_ROLE}`,
    );
    await q.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT USAGE, SELECT ON SEQUENCES TO ${APP_ROLE}`);
    // The migrations' own bookkeeping is the owner's.
    await q.query(`REVOKE INSERT, UPDATE, DELETE ON migrations FROM ${APP_ROLE}`);

    await q.query(`
      CREATE FUNCTION sdf_tenant_visible(row_tenant uuid) RETURNS boolean
      LANGUAGE sql STABLE AS $$
        SELECT coalesce(current_setting('app.tenant_id', true), '') = ''
            OR row_tenant = nullif(current_setting('app.tenant_id', true), '')::uuid
      $$`);
    for (const { table, column } of await tenantTables(q)) {
      await q.query(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`);
      await q.query(`ALTER TABLE ${table} FORCE ROW LEVEL SECURITY`);
      await q.query(
        `CREATE POLICY tenant_isolation ON ${table}
           USING (sdf_tenant_visible(${column})) WITH CHECK (sdf_tenant_visible(${column}))`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    const schema = await currentSchema(q);
    for (const { table } of await tenantTables(q)) {
      await q.query(`DROP POLICY IF EXISTS tenant_isolation ON ${table}`);
      await q.query(`ALTER TABLE ${table} NO FORCE ROW LEVEL SECURITY`);
      await q.query(`ALTER TABLE ${table} DISABLE ROW LEVEL SECURITY`);
    }
    await q.query(`DROP FUNCTION sdf_tenant_visible(uuid)`);
    await q.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} REVOKE ALL ON TABLES FROM ${APP_ROLE}`);
    await q.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} REVOKE ALL ON SEQUENCES FROM ${APP_ROLE}`);
    await q.query(`REVOKE ALL ON ALL TABLES IN SCHEMA ${schema} FROM ${APP_ROLE}`);
    await q.query(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${schema} FROM ${APP_ROLE}`);
    await q.query(`REVOKE USAGE ON SCHEMA ${schema} FROM ${APP_ROLE}`);
    // The role is shared by every database of the server: it stays.
  }
}

/** The schema the migrations create tables in, quoted. */
async function currentSchema(q: QueryRunner): Promise<string> {
  const [{ name }] = (await q.query(`SELECT quote_ident(current_schema()) AS name`)) as [{ name: string }];
  return name;
}

/** Every table of the schema (partitioned parents, not their partitions) whose rows belong to a tenant. */
export async function tenantTables(q: QueryRunner): Promise<{ table: string; column: string }[]> {
  const rows = (await q.query(
    `SELECT c.relname AS table, CASE WHEN c.relname = 'tenants' THEN 'id' ELSE 'tenant_id' END AS column
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND (c.relname = 'tenants'
             OR EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped))
      ORDER BY 1`,
  )) as { table: string; column: string }[];
  return rows.map((r) => ({ table: `"${r.table}"`, column: r.column }));
}
