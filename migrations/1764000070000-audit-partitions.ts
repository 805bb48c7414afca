import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Months after the current one that get their partition ahead of time (the service keeps the same lead). */
const MONTHS_AHEAD = 3;

const COLUMNS = 'id, tenant_id, action, resource_id, actor, ip_address, metadata, created_at';

/** The (tenant_id, ...) indexes in page order that GET /v1/audit reads (M4); on a partitioned table each partition gets them. */
const INDEXES = [
  'CREATE INDEX audit_log_tenant_created_idx ON audit_log (tenant_id, created_at DESC, id DESC)',
  'CREATE INDEX audit_log_tenant_action_created_idx ON audit_log (tenant_id, action, created_at DESC, id DESC)',
  'CREATE INDEX audit_log_tenant_actor_created_idx ON audit_log (tenant_id, actor, created_at DESC, id DESC)',
];
const INDEX_NAMES = [
  'audit_log_tenant_created_idx',
  'audit_log_tenant_action_created_idx',
  'audit_log_tenant_actor_created_idx',
];

/**
 * S11: entries are kept 7 years and never updated or deleted. To let entries past retention go without
 * ever allowing a DELETE, audit_log becomes a table partitioned by month on created_at (UTC months,
 * partitions named audit_log_yYYYYmMM, plus audit_log_default so an insert never fails for a missing
 * month). A whole month past retention is then detached and dropped by `sdf admin audit-retention`,
 * which connects as a role that owns the table; the service itself never detaches or drops.
 *
 * Append-only survives the change: the row trigger on the parent is cloned onto every partition, and
 * because a TRUNCATE trigger on the parent does not fire for `TRUNCATE audit_log_y2026m11`, every
 * partition gets its own (audit_log_ensure_partition does it for the months to come).
 *
 * audit_log_ensure_partitions(months_ahead) makes the partitions of the current month and the next
 * months_ahead ones that are missing; the service calls it at start and daily. It runs with its owner's
 * rights (SECURITY DEFINER), so an application role that does not own audit_log can still add months
 * (and only that: it creates empty partitions).
 */
export class AuditPartitions1764000070000 implements MigrationInterface {
  name = 'AuditPartitions1764000070000';

  async up(q: QueryRunner): Promise<void> {
    const schema = await currentSchema(q);
    // The old table keeps its rows until they are copied; its indexes and key give up their names.
    await q.query(`ALTER TABLE audit_log RENAME TO audit_log_unpartitioned`);
    await q.query(
      `ALTER TABLE audit_log_unpartitioned RENAME CONSTRAINT audit_log_pkey TO audit_log_unpartitioned_pkey`,
    );
    for (const name of INDEX_NAMES) await q.query(`DROP INDEX IF EXISTS ${name}`);

    // A partitioned table's unique key must hold the partition key.
    await q.query(`
      CREATE TABLE audit_log (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        tenant_id uuid,
        action text NOT NULL,
        resource_id text,
        actor text NOT NULL,
        ip_address text,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT audit_log_pkey PRIMARY KEY (id, created_at)
      ) PARTITION BY RANGE (created_at)`);
    for (const sql of INDEXES) await q.query(sql);
    await q.query(`
      CREATE TRIGGER audit_log_no_update_delete BEFORE UPDATE OR DELETE ON audit_log
      FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()`);
    await q.query(`
      CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
      FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()`);

    await q.query(`CREATE TABLE audit_log_default PARTITION OF audit_log DEFAULT`);
    await q.query(`
      CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log_default
      FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()`);

    const searchPath = `${quoteIdent(schema)}, pg_temp`;
    await q.query(`
      CREATE FUNCTION audit_log_ensure_partition(month_start date) RETURNS text
      LANGUAGE plpgsql SECURITY DEFINER SET search_path = ${searchPath} AS $$
      DECLARE
        first date := date_trunc('month', month_start)::date;
        from_at timestamptz := first::timestamp AT TIME ZONE 'UTC';
        to_at timestamptz := (first + interval '1 month') AT TIME ZONE 'UTC';
        part text := format('audit_log_y%sm%s', to_char(first, 'YYYY'), to_char(first, 'MM'));
      BEGIN
        -- API and worker processes start together: one creator at a time.
        PERFORM pg_advisory_xact_lock(727275);
        IF EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                    WHERE i.inhparent = 'audit_log'::regclass AND c.relname = part) THEN
          RETURN NULL;
        END IF;
        -- Rows of that month already in the default partition could only move by a DELETE there, which
        -- append-only refuses: they stay where they are (still read through audit_log), the month is skipped.
        IF EXISTS (SELECT 1 FROM audit_log_default WHERE created_at >= from_at AND created_at < to_at) THEN
          RAISE WARNING 'audit_log_default holds entries of %; partition % not created', to_char(first, 'YYYY-MM'), part;
          RETURN NULL;
        END IF;
        EXECUTE format('CREATE TABLE %I PARTITION OF audit_log FOR VALUES FROM (%L) TO (%L)', part, from_at, to_at);
        EXECUTE format('CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON %I
                        FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()', part);
        RETURN part;
      END $$`);
    await q.query(`
      CREATE FUNCTION audit_log_ensure_partitions(months_ahead int) RETURNS SETOF text
      LANGUAGE sql SECURITY DEFINER SET search_path = ${searchPath} AS $$
        SELECT created FROM (
          SELECT audit_log_ensure_partition(
                   (date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => n))::date) AS created
            FROM generate_series(0, greatest(months_ahead, 0)) AS n
           ORDER BY n
        ) made
        WHERE created IS NOT NULL
      $$`);

    // Every month that existing entries fall in, then the months to come; only then the rows move.
    await q.query(`
      SELECT audit_log_ensure_partition(m)
        FROM (SELECT DISTINCT date_trunc('month', created_at AT TIME ZONE 'UTC')::date AS m
                FROM audit_log_unpartitioned) months
       ORDER BY m`);
    await q.query(`SELECT audit_log_ensure_partitions($1)`, [MONTHS_AHEAD]);
    await q.query(`INSERT INTO audit_log (${COLUMNS}) SELECT ${COLUMNS} FROM audit_log_unpartitioned`);
    // DROP is not DELETE or TRUNCATE: the old table's triggers do not stop it.
    await q.query(`DROP TABLE audit_log_unpartitioned`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audit_log RENAME TO audit_log_partitioned`);
    await q.query(`ALTER TABLE audit_log_partitioned RENAME CONSTRAINT audit_log_pkey TO audit_log_partitioned_pkey`);
    for (const name of INDEX_NAMES) await q.query(`DROP INDEX IF EXISTS ${name}`);
    await q.query(`DROP FUNCTION audit_log_ensure_partitions(int)`);
    await q.query(`DROP FUNCTION audit_log_ensure_partition(date)`);

    await q.query(`
      CREATE TABLE audit_log (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid,
        action text NOT NULL,
        resource_id text,
        actor text NOT NULL,
        ip_address text,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `INSERT INTO audit_log (${COLUMNS}) SELECT ${COLUMNS} FROM audit_log_partitioned ORDER BY created_at, id`,
    );
    // Dropping the partitioned table drops every partition with it.
    await q.query(`DROP TABLE audit_log_partitioned`);
    for (const sql of INDEXES) await q.query(sql);
    await q.query(`
      CREATE TRIGGER audit_log_no_update_delete BEFORE UPDATE OR DELETE ON audit_log
      FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()`);
    await q.query(`
      CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
      FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()`);
  }
}

async function currentSchema(q: QueryRunner): Promise<string> {
  const [row] = (await q.query(`SELECT current_schema() AS schema`)) as { schema: string }[];
  if (!row?.schema) throw new Error('no current schema to create audit_log partitions in');
  return row.schema;
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
