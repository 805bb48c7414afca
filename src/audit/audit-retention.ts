import type pg from 'pg';

/** S11: audit entries are kept 7 years; the retention command never drops younger ones. */
export const AUDIT_RETENTION_YEARS = 7;

/** Why the retention command will not act on this database (the reason is for the operator). */
export class AuditRetentionRefusal extends Error {}

export interface RetentionPartition {
  name: string;
  /** The partition's range, [from, to), ISO 8601 UTC. */
  from: string;
  to: string;
  /** Entries it held: counted before the drop (dry run: as listed). */
  rows: number;
}

export interface RetentionReport {
  dry_run: boolean;
  years: number;
  /** Partitions whose whole range ends at or before this instant are past retention. */
  cutoff: string;
  /** Past retention: listed on a dry run, detached and dropped otherwise. */
  partitions: RetentionPartition[];
  /**
   * Entries past retention in the default partition. They are kept: only a DELETE could remove them,
   * and append-only refuses it (they are there only if written before their month had a partition).
   */
  default_partition_rows_past_cutoff: number;
}

interface PartitionRow {
  qualified: string;
  name: string;
  is_default: boolean;
  from_at: Date | null;
  to_at: Date | null;
}

/**
 * Detaches and drops every monthly partition of audit_log whose whole range ended more than `years` ago
 * (S11). `client` must connect as a role that owns audit_log: the operator's maintenance role, never the
 * service's (the service only creates partitions). Each partition goes in its own transaction, together
 * with an `audit.partition_dropped` entry recording what went, so the log keeps a trace of its own pruning.
 */
export async function applyAuditRetention(
  client: pg.Client,
  options: { years: number; dryRun: boolean; actor: string },
): Promise<RetentionReport> {
  if (!Number.isInteger(options.years) || options.years < AUDIT_RETENTION_YEARS) {
    throw new AuditRetentionRefusal(
      `retention must be at least ${AUDIT_RETENTION_YEARS} years: audit entries are kept that long`,
    );
  }
  // Partition bounds are read back from their text form; ISO and UTC make that exact whatever the role's settings.
  await client.query(`SET DateStyle = ISO; SET TimeZone = 'UTC'`);
  const parent = await client.query<{ qualified: string | null; kind: string | null }>(
    `SELECT to_regclass('audit_log')::text AS qualified,
            (SELECT relkind::text FROM pg_class WHERE oid = to_regclass('audit_log')) AS kind`,
  );
  const table = parent.rows[0];
  if (!table?.qualified) throw new AuditRetentionRefusal('audit_log does not exist on this database');
  if (table.kind !== 'p') {
    throw new AuditRetentionRefusal('audit_log is not partitioned: run the service (it migrates at start) first');
  }
  const { rows: at } = await client.query<{ cutoff: Date }>(
    `SELECT now() - make_interval(years => $1::int) AS cutoff`,
    [options.years],
  );
  const cutoff = at[0]!.cutoff;
  const { rows: partitions } = await client.query<PartitionRow>(
    `SELECT c.oid::regclass::text AS qualified, c.relname AS name, b.bound = 'DEFAULT' AS is_default,
            substring(b.bound FROM 'FROM \\(''([^'']+)''\\)')::timestamptz AS from_at,
            substring(b.bound FROM 'TO \\(''([^'']+)''\\)')::timestamptz AS to_at
       FROM pg_inherits i
       JOIN pg_class c ON c.oid = i.inhrelid
       CROSS JOIN LATERAL (SELECT pg_get_expr(c.relpartbound, c.oid) AS bound) b
      WHERE i.inhparent = $1::regclass
      ORDER BY from_at NULLS FIRST, c.relname`,
    [table.qualified],
  );

  const report: RetentionReport = {
    dry_run: options.dryRun,
    years: options.years,
    cutoff: cutoff.toISOString(),
    partitions: [],
    default_partition_rows_past_cutoff: 0,
  };
  // A range bounded by MINVALUE has no FROM value and is not a month: it is left alone, like MAXVALUE.
  const expired = partitions.filter((p) => p.from_at && p.to_at && p.to_at.getTime() <= cutoff.getTime());
  for (const p of expired) {
    const entry = { name: p.name, from: p.from_at!.toISOString(), to: p.to_at!.toISOString(), rows: 0 };
    if (options.dryRun) {
      entry.rows = await countRows(client, p.qualified);
    } else {
      await client.query('BEGIN');
      try {
        // DETACH locks audit_log against writers while it runs: give up rather than queue them for long.
        await client.query(`SET LOCAL lock_timeout = '10s'`);
        await client.query(`ALTER TABLE ${table.qualified} DETACH PARTITION ${p.qualified}`);
        entry.rows = await countRows(client, p.qualified);
        await client.query(`DROP TABLE ${p.qualified}`);
        await client.query(
          `INSERT INTO ${table.qualified} (tenant_id, action, resource_id, actor, metadata)
           VALUES (NULL, 'audit.partition_dropped', $1, $2, $3::jsonb)`,
          [
            p.name,
            options.actor,
            JSON.stringify({ from: entry.from, to: entry.to, rows: entry.rows, retention_years: options.years }),
          ],
        );
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    }
    report.partitions.push(entry);
  }
  const fallback = partitions.find((p) => p.is_default);
  if (fallback) {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${fallback.qualified} WHERE created_at < $1`,
      [cutoff],
    );
    report.default_partition_rows_past_cutoff = rows[0]!.n;
  }
  return report;
}

async function countRows(client: pg.Client, qualified: string): Promise<number> {
  const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${qualified}`);
  return rows[0]!.n;
}
