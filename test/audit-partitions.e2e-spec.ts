import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AuditPartitions1764000070000 } from '../migrations/1764000070000-audit-partitions.js';
import { AuditQueryService } from '../src/audit/audit-query.service.js';
import { dataSourceOptions } from '../src/database/data-source.js';
import { startApp, type TestApp } from './helpers/app.js';
import { createDatabaseFromTemplate, dropDatabase, testDatabaseUrl } from './helpers/database.js';
import { distCli, requireBuild, runNode } from './helpers/processes.js';

interface Report {
  dry_run: boolean;
  years: number;
  cutoff: string;
  partitions: { name: string; from: string; to: string; rows: number }[];
  default_partition_rows_past_cutoff: number;
}

/** The partition a month's entries belong in (UTC months), `monthsFromNow` months from the database's now. */
async function partitionName(ds: DataSource, monthsFromNow: number): Promise<string> {
  const [row] = (await ds.query(
    `SELECT to_char(date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => $1), '"audit_log_y"YYYY"m"MM') AS name`,
    [monthsFromNow],
  )) as { name: string }[];
  return row!.name;
}

async function partitionsOf(ds: DataSource): Promise<string[]> {
  const rows = (await ds.query(
    `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'audit_log'::regclass ORDER BY 1`,
  )) as { relname: string }[];
  return rows.map((r) => r.relname);
}

/** Where each entry of a resource is stored. */
async function storedIn(ds: DataSource, resourceId: string): Promise<string[]> {
  const rows = (await ds.query(`SELECT tableoid::regclass::text AS part FROM audit_log WHERE resource_id = $1`, [
    resourceId,
  ])) as { part: string }[];
  return rows.map((r) => r.part);
}

/** S11: the audit log is partitioned by month; old months go whole, by a privileged command, never by a DELETE. */
describe('audit log partitions and retention (S11)', () => {
  let t: TestApp;
  let cli: NodeJS.ProcessEnv;
  const retention = (args: string[], env: NodeJS.ProcessEnv = cli) =>
    runNode([distCli, 'admin', 'audit-retention', ...args], env);

  beforeAll(async () => {
    requireBuild(distCli);
    // Managed: the /v1 audit query service is loaded, and read directly below.
    // As the owner: the test detaches and drops partitions and makes a role of its own.
    t = await startApp({ env: { DEPLOYMENT_MODE: 'managed', DATABASE_APP_ROLE: '' } });
    // The command needs neither the service's secrets nor its DATABASE_URL: only the maintenance connection.
    cli = { PATH: process.env.PATH, AUDIT_MAINTENANCE_DATABASE_URL: t.config.env.DATABASE_URL };
  });
  afterAll(() => t.close());

  it('is a table partitioned by range on created_at, with this month, the next ones and a default partition', async () => {
    const [table] = (await t.ds.query(
      `SELECT p.partstrat, pg_get_partkeydef(p.partrelid) AS key
         FROM pg_partitioned_table p WHERE p.partrelid = 'audit_log'::regclass`,
    )) as { partstrat: string; key: string }[];
    expect(table).toEqual({ partstrat: 'r', key: 'RANGE (created_at)' });
    const parts = await partitionsOf(t.ds);
    for (const month of [0, 1, 2, 3]) expect(parts).toContain(await partitionName(t.ds, month));
    expect(parts).toContain('audit_log_default');
    // This month's partition spans the UTC month exactly (bounds read back in the session's own time zone).
    const [bound] = (await t.ds.query(
      `WITH b AS (SELECT pg_get_expr(relpartbound, oid) AS bound FROM pg_class WHERE relname = $1),
            m AS (SELECT date_trunc('month', now() AT TIME ZONE 'UTC') AS m0)
       SELECT substring(bound FROM 'FROM \\(''([^'']+)''\\)')::timestamptz = (m0 AT TIME ZONE 'UTC') AS from_ok,
              substring(bound FROM 'TO \\(''([^'']+)''\\)')::timestamptz = ((m0 + interval '1 month') AT TIME ZONE 'UTC') AS to_ok
         FROM b, m`,
      [await partitionName(t.ds, 0)],
    )) as { from_ok: boolean; to_ok: boolean }[];
    expect(bound).toEqual({ from_ok: true, to_ok: true });

    // An entry the service writes lands in this month's partition, not in the default one.
    const created = await t
      .http()
      .post('/admin/tenants')
      .set('Authorization', `Bearer ${t.adminToken()}`)
      .send({ name: 'Partitioned', slug: `part-${randomBytes(3).toString('hex')}` })
      .expect(201);
    expect(await storedIn(t.ds, created.body.id)).toEqual([await partitionName(t.ds, 0)]);
  });

  it('makes missing months at start (and only creates partitions, the service never drops one)', async () => {
    const ahead = await partitionName(t.ds, 3);
    await t.ds.query(`ALTER TABLE audit_log DETACH PARTITION ${ahead}`);
    await t.ds.query(`DROP TABLE ${ahead}`);
    expect(await partitionsOf(t.ds)).not.toContain(ahead);
    const second = await startApp({ shareWith: t });
    try {
      expect(await partitionsOf(t.ds)).toContain(ahead);
      const [trigger] = (await t.ds.query(
        `SELECT count(*)::int AS n FROM pg_trigger WHERE tgrelid = $1::regclass AND tgname = 'audit_log_no_truncate'`,
        [ahead],
      )) as { n: number }[];
      expect(trigger!.n).toBe(1);
    } finally {
      await second.close();
    }
    // Idempotent: nothing is left to create.
    expect(await t.ds.query(`SELECT * FROM audit_log_ensure_partitions(3)`)).toEqual([]);
  });

  it('refuses UPDATE, DELETE and TRUNCATE on the table and on each partition', async () => {
    const resource = `append-only-${randomUUID()}`;
    await t.ds.query(`INSERT INTO audit_log (action, actor, resource_id) VALUES ('test.entry', 'test', $1)`, [
      resource,
    ]);
    await t.ds.query(
      `INSERT INTO audit_log (action, actor, resource_id, created_at) VALUES ('test.entry', 'test', $1, now() + interval '30 years')`,
      [resource],
    );
    const current = await partitionName(t.ds, 0);
    expect((await storedIn(t.ds, resource)).sort()).toEqual(['audit_log_default', current]);
    const refused = [
      `UPDATE audit_log SET action = 'tampered' WHERE resource_id = '${resource}'`,
      `UPDATE audit_log SET created_at = created_at - interval '1 year' WHERE resource_id = '${resource}'`,
      `DELETE FROM audit_log WHERE resource_id = '${resource}'`,
      `UPDATE ${current} SET action = 'tampered' WHERE resource_id = '${resource}'`,
      `DELETE FROM ${current} WHERE resource_id = '${resource}'`,
      `DELETE FROM audit_log_default WHERE resource_id = '${resource}'`,
      `TRUNCATE audit_log`,
      `TRUNCATE ${current}`,
      `TRUNCATE audit_log_default`,
      `TRUNCATE ${await partitionName(t.ds, 1)}`,
    ];
    for (const sql of refused) await expect(t.ds.query(sql), sql).rejects.toThrow(/append-only/);
    const rows = (await t.ds.query(`SELECT action FROM audit_log WHERE resource_id = $1`, [resource])) as {
      action: string;
    }[];
    expect(rows).toEqual([{ action: 'test.entry' }, { action: 'test.entry' }]);
  });

  it('pages one tenant newest first across months and partitions (GET /v1/audit reads the same way)', async () => {
    const tenantId = randomUUID();
    // Three months back has no partition: those entries sit in the default one, and are read all the same.
    await t.ds.query(
      `SELECT audit_log_ensure_partition((date_trunc('month', now() AT TIME ZONE 'UTC') - interval '1 month')::date)`,
    );
    await t.ds.query(
      `INSERT INTO audit_log (tenant_id, action, actor, created_at)
       SELECT $1, 'seed', 'user:x',
              (date_trunc('month', now() AT TIME ZONE 'UTC') - (i % 3) * interval '1 month') AT TIME ZONE 'UTC'
                + (i / 3) * interval '1 minute'
         FROM generate_series(0, 44) AS i`,
      [tenantId],
    );
    const spread = (await t.ds.query(`SELECT count(DISTINCT tableoid)::int AS n FROM audit_log WHERE tenant_id = $1`, [
      tenantId,
    ])) as { n: number }[];
    expect(spread[0]!.n).toBe(3);
    const expected = (
      (await t.ds.query(`SELECT id FROM audit_log WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC`, [
        tenantId,
      ])) as { id: string }[]
    ).map((r) => r.id);
    const audit = t.app.get(AuditQueryService);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let n = 0; n < 10; n++) {
      const page = await audit.page(tenantId, { limit: 7, cursor });
      seen.push(...page.entries.map((e) => e.id));
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    expect(seen).toEqual(expected);
  });

  describe('sdf admin audit-retention', () => {
    let expiredPartition: string;
    const tenantId = randomUUID();
    const entryAged = async (years: number, resource: string) => {
      const [month] = (await t.ds.query(
        `SELECT audit_log_ensure_partition(((now() - make_interval(years => $1)) AT TIME ZONE 'UTC')::date) AS created,
                to_char((now() - make_interval(years => $1)) AT TIME ZONE 'UTC', '"audit_log_y"YYYY"m"MM') AS name`,
        [years],
      )) as { created: string | null; name: string }[];
      // The application's own connection may insert a backdated entry: INSERT is what append-only allows.
      await t.ds.query(
        `INSERT INTO audit_log (tenant_id, action, actor, resource_id, created_at)
         VALUES ($1, 'test.aged', 'test', $2, now() - make_interval(years => $3))`,
        [tenantId, resource, years],
      );
      return month!.name;
    };

    beforeAll(async () => {
      expiredPartition = await entryAged(8, 'eight-years');
      await entryAged(6, 'six-years');
      await t.ds.query(
        `INSERT INTO audit_log (tenant_id, action, actor, resource_id) VALUES ($1, 'test.aged', 'test', 'today')`,
        [tenantId],
      );
      expect(await storedIn(t.ds, 'eight-years')).toEqual([expiredPartition]);
    });

    it('refuses without AUDIT_MAINTENANCE_DATABASE_URL, naming it, and with fewer than 7 years', async () => {
      const unset = await retention(['--dry-run'], { PATH: process.env.PATH, DATABASE_URL: t.config.env.DATABASE_URL });
      expect(unset.code).toBe(1);
      expect(unset.stdout).toBe('');
      expect(unset.stderr).toContain('AUDIT_MAINTENANCE_DATABASE_URL is not set');
      const short = await retention(['--years', '6', '--dry-run']);
      expect(short.code).toBe(2);
      expect(short.stderr).toMatch(/--years must be at least 7/);
      expect(await partitionsOf(t.ds)).toContain(expiredPartition);
    });

    it('--dry-run lists the month past 7 years and changes nothing', async () => {
      const run = await retention(['--dry-run']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const report = JSON.parse(run.stdout) as Report;
      expect(report).toMatchObject({ dry_run: true, years: 7, default_partition_rows_past_cutoff: 0 });
      expect(report.partitions).toEqual([
        { name: expiredPartition, from: expect.any(String), to: expect.any(String), rows: 1 },
      ]);
      expect(Date.parse(report.partitions[0]!.to)).toBeLessThanOrEqual(Date.parse(report.cutoff));
      expect(await partitionsOf(t.ds)).toContain(expiredPartition);
      expect(await storedIn(t.ds, 'eight-years')).toEqual([expiredPartition]);
    });

    it('detaches and drops it, records that in the log, and keeps the 6-year-old and current entries', async () => {
      const run = await retention([]);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const report = JSON.parse(run.stdout) as Report;
      expect(report.dry_run).toBe(false);
      expect(report.partitions.map((p) => p.name)).toEqual([expiredPartition]);
      expect(report.partitions[0]!.rows).toBe(1);

      expect(await partitionsOf(t.ds)).not.toContain(expiredPartition);
      const left = (await t.ds.query(`SELECT resource_id FROM audit_log WHERE tenant_id = $1 ORDER BY created_at`, [
        tenantId,
      ])) as { resource_id: string }[];
      expect(left.map((r) => r.resource_id)).toEqual(['six-years', 'today']);
      const trace = (await t.ds.query(
        `SELECT actor, metadata FROM audit_log WHERE action = 'audit.partition_dropped' AND resource_id = $1`,
        [expiredPartition],
      )) as { actor: string; metadata: Record<string, unknown> }[];
      expect(trace).toHaveLength(1);
      expect(trace[0]!.actor).toMatch(/^admin:cli:/);
      expect(trace[0]!.metadata).toMatchObject({ rows: 1, retention_years: 7 });

      const again = await retention([]);
      expect(again.code).toBe(0);
      expect((JSON.parse(again.stdout) as Report).partitions).toEqual([]);
    });
  });

  describe('with the service on a role that does not own audit_log', () => {
    const role = `sdf_test_app_${randomBytes(4).toString('hex')}`;
    let app: pg.Client;

    beforeAll(async () => {
      await t.ds.query(`CREATE ROLE ${role} LOGIN`);
      await t.ds.query(`GRANT SELECT, INSERT ON audit_log TO ${role}`);
      const url = new URL(t.config.env.DATABASE_URL);
      url.username = role;
      url.password = '';
      app = new pg.Client({ connectionString: url.toString() });
      await app.connect();
    });
    afterAll(async () => {
      await app.end();
      await t.ds.query(`DROP OWNED BY ${role}`);
      await t.ds.query(`DROP ROLE ${role}`);
    });

    it('writes and reads, adds months through audit_log_ensure_partition, and can neither detach nor drop', async () => {
      await app.query(`INSERT INTO audit_log (action, actor) VALUES ('test.role', 'test')`);
      await expect(app.query(`SELECT count(*) FROM audit_log`)).resolves.toBeTruthy();
      const made = await app.query<{ name: string | null }>(
        `SELECT audit_log_ensure_partition((now() + interval '20 years')::date) AS name`,
      );
      const name = made.rows[0]!.name!;
      expect(name).toMatch(/^audit_log_y\d{4}m\d\d$/);
      await expect(app.query(`DELETE FROM audit_log`)).rejects.toThrow(/permission denied/);
      await expect(app.query(`ALTER TABLE audit_log DETACH PARTITION ${name}`)).rejects.toThrow(/must be owner/);
      await expect(app.query(`DROP TABLE ${name}`)).rejects.toThrow(/must be owner/);
      expect(await partitionsOf(t.ds)).toContain(name);
    });
  });
});

describe('audit partitions migration', () => {
  let database: string;
  let ds: DataSource;

  beforeAll(async () => {
    database = await createDatabaseFromTemplate(inject('templateDatabase'));
    ds = new DataSource(dataSourceOptions(testDatabaseUrl(database), 2));
    await ds.initialize();
  });
  afterAll(async () => {
    await ds.destroy();
    await dropDatabase(database);
  });

  async function inTransaction(step: 'up' | 'down'): Promise<void> {
    const q = ds.createQueryRunner();
    await q.startTransaction();
    try {
      await new AuditPartitions1764000070000()[step](q);
      await q.commitTransaction();
    } catch (err) {
      await q.rollbackTransaction();
      throw err;
    } finally {
      await q.release();
    }
  }

  it('down() restores a plain table with every row; up() partitions it again with a month for each row', async () => {
    // Five years back, one entry a month: only this month has a partition yet, the others sit in the default one.
    await ds.query(
      `INSERT INTO audit_log (action, actor, created_at)
       SELECT 'test.migrate', 'test', now() - i * interval '1 month' FROM generate_series(0, 59) AS i`,
    );
    const [fallback] = (await ds.query(`SELECT count(*)::int AS n FROM audit_log_default`)) as { n: number }[];
    expect(fallback!.n).toBe(59);
    const before = (await ds.query(`SELECT id, action, created_at FROM audit_log ORDER BY id`)) as unknown[];

    await inTransaction('down');
    const [plain] = (await ds.query(
      `SELECT relkind::text AS kind FROM pg_class WHERE oid = 'audit_log'::regclass`,
    )) as {
      kind: string;
    }[];
    expect(plain!.kind).toBe('r');
    expect(await ds.query(`SELECT id, action, created_at FROM audit_log ORDER BY id`)).toEqual(before);
    await expect(ds.query(`DELETE FROM audit_log`)).rejects.toThrow(/append-only/);
    await expect(ds.query(`TRUNCATE audit_log`)).rejects.toThrow(/append-only/);

    await inTransaction('up');
    expect(await ds.query(`SELECT id, action, created_at FROM audit_log ORDER BY id`)).toEqual(before);
    const [spread] = (await ds.query(
      `SELECT count(DISTINCT tableoid)::int AS months, count(*) FILTER (WHERE tableoid = 'audit_log_default'::regclass)::int AS fallback
         FROM audit_log WHERE action = 'test.migrate'`,
    )) as { months: number; fallback: number }[];
    expect(spread).toEqual({ months: 60, fallback: 0 });
    await expect(ds.query(`DELETE FROM audit_log`)).rejects.toThrow(/append-only/);
    await expect(ds.query(`TRUNCATE audit_log_default`)).rejects.toThrow(/append-only/);
  });
});
