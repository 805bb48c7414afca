import pg from 'pg';
import type { EntitySubscriberInterface, TransactionStartEvent } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestContext } from '../src/common/request-context.js';
import { ApiKeysService } from '../src/auth/api-keys.service.js';
import { preparedQuery } from '../src/database/prepared.js';
import { startApp, type TestApp } from './helpers/app.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

/** Every table whose rows belong to a tenant, from the schema itself: a new one is walked too. */
async function tenantTables(owner: pg.Client): Promise<{ table: string; column: string }[]> {
  const { rows } = await owner.query<{ table: string; column: string }>(
    `SELECT c.relname AS table, CASE WHEN c.relname = 'tenants' THEN 'id' ELSE 'tenant_id' END AS column
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND (c.relname = 'tenants' OR EXISTS (
              SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped))
      ORDER BY 1`,
  );
  return rows;
}

describe('row-level security: the second wall between tenants', () => {
  let t: TestApp;
  let owner: pg.Client;
  let a: TenantFixture;
  let b: TenantFixture;

  beforeAll(async () => {
    t = await startApp({ env: { DATABASE_APP_ROLE: 'sdf_app' } });
    owner = new pg.Client({ connectionString: t.config.env.DATABASE_URL });
    await owner.connect();
    // Two tenants with documents, keys, schemas, webhooks, audit entries and events, made through the API.
    [a, b] = [await createTenant(t), await createTenant(t)];
    for (const tenant of [a, b]) {
      const key = { 'X-API-Key': tenant.apiKey };
      const res = await upload(t, tenant.apiKey, (await buildSdf()).archive).expect(201);
      await waitForFinal(t, tenant.apiKey, res.body.id as string);
      await t
        .http()
        .post('/schemas')
        .set(key)
        .send({ schema_id: 'invoice/v1', version: '1', schema: { type: 'object' } })
        .expect(201);
      await t
        .http()
        .post('/webhooks')
        .set(key)
        .send({ url: 'http://127.0.0.1:9/hook', secret: 'a-secret-of-sixteen-chars', events: ['document.signed'] })
        .expect(201);
    }
  });
  afterAll(async () => {
    await owner?.end();
    await t?.close();
  });

  /** A query through the service's own connection pool, in a transaction acting for `tenantId`. */
  const asTenant = <T>(tenantId: string, sql: string, params: unknown[] = []) =>
    requestContext.run({ requestId: 'rls-test', tenantId }, () =>
      t.ds.transaction((m) => m.query(sql, params) as Promise<T>),
    );

  it('the service acts as a role that is no superuser, owns no table and cannot bypass row-level security', async () => {
    const [me] = (await t.ds.query(
      `SELECT current_user AS name, r.rolsuper, r.rolbypassrls,
              (SELECT count(*)::int FROM pg_class c WHERE c.relowner = r.oid) AS owned
         FROM pg_roles r WHERE r.rolname = current_user`,
    )) as { name: string; rolsuper: boolean; rolbypassrls: boolean; owned: number }[];
    expect(me).toEqual({ name: 'sdf_app', rolsuper: false, rolbypassrls: false, owned: 0 });
    // Even RESET ROLE comes back to it: the role is the connection's starting setting.
    const afterReset = await t.ds.transaction(async (m) => {
      await m.query(`RESET ROLE`);
      return (await m.query(`SELECT current_user AS name`)) as { name: string }[];
    });
    expect(afterReset).toEqual([{ name: 'sdf_app' }]);
  });

  it('every tenant table has row-level security forced and a policy', async () => {
    const tables = await tenantTables(owner);
    expect(tables.length).toBeGreaterThanOrEqual(15);
    const { rows } = await owner.query<{ table: string; enabled: boolean; forced: boolean; policies: number }>(
      `SELECT c.relname AS table, c.relrowsecurity AS enabled, c.relforcerowsecurity AS forced,
              (SELECT count(*)::int FROM pg_policy p WHERE p.polrelid = c.oid) AS policies
         FROM pg_class c WHERE c.relname = ANY($1) ORDER BY 1`,
      [tables.map((x) => x.table)],
    );
    expect(rows.filter((r) => !r.enabled || !r.forced || r.policies === 0)).toEqual([]);
    expect(rows).toHaveLength(tables.length);
  });

  it("an unscoped SELECT on every tenant table inside tenant A's transaction sees A's rows and only them", async () => {
    let withOthers = 0;
    for (const { table, column } of await tenantTables(owner)) {
      const seen = await asTenant<{ tenant: string }[]>(a.id, `SELECT ${column}::text AS tenant FROM "${table}"`);
      expect(
        seen.filter((r) => r.tenant !== a.id),
        table,
      ).toEqual([]);
      const { rows } = await owner.query<{ mine: number; others: number }>(
        `SELECT count(*) FILTER (WHERE ${column} = $1)::int AS mine,
                count(*) FILTER (WHERE ${column} IS DISTINCT FROM $1)::int AS others FROM "${table}"`,
        [a.id],
      );
      expect(seen.length, table).toBe(rows[0]!.mine);
      if (rows[0]!.others > 0) withOthers++;
    }
    // The walk meant something: most tables held another tenant's rows, which A did not see.
    expect(withOthers).toBeGreaterThanOrEqual(6);
  });

  it("inside A's transaction an unscoped UPDATE changes A's rows alone, and a row for B cannot be written", async () => {
    const changed = await asTenant<[unknown[], number]>(a.id, `UPDATE documents SET updated_at = now()`);
    expect(changed[1]).toBe(1);
    await expect(
      asTenant(a.id, `UPDATE documents SET tenant_id = $1 WHERE tenant_id = $2`, [b.id, a.id]),
    ).rejects.toThrow(/row-level security/);
    await expect(
      asTenant(
        a.id,
        `INSERT INTO schemas (tenant_id, schema_id, version, schema, content_hash) SELECT $1, schema_id, '9', schema, content_hash FROM schemas LIMIT 1`,
        [b.id],
      ),
    ).rejects.toThrow(/row-level security/);
  });

  it('a statement outside any transaction, through TypeORM or a prepared statement, sees only the tenant it acts for', async () => {
    const tenantsOf = (rows: { tenant: string }[]) => [...new Set(rows.map((r) => r.tenant))].sort();
    const sql = `SELECT tenant_id::text AS tenant FROM documents`;
    const as = <T>(tenantId: string | undefined, work: () => Promise<T>) =>
      requestContext.run({ requestId: 'rls-single', ...(tenantId ? { tenantId } : {}) }, work);
    // One after another, so the pool hands the same connections from A to B to no tenant and back.
    for (let round = 0; round < 3; round++) {
      for (const tenant of [a, b]) {
        expect(tenantsOf(await as(tenant.id, () => t.ds.query(sql)))).toEqual([tenant.id]);
        expect(tenantsOf(await as(tenant.id, () => preparedQuery(t.ds, 'rls_probe_documents', sql, [])))).toEqual([
          tenant.id,
        ]);
      }
      // Without a tenant (an operator's list across tenants, a sweep), every tenant's rows.
      const all = tenantsOf(await as(undefined, () => preparedQuery(t.ds, 'rls_probe_documents', sql, [])));
      expect(all).toEqual(expect.arrayContaining([a.id, b.id]));
      expect(tenantsOf(await t.ds.query(sql))).toEqual(all);
    }
  });

  it("the API key lookup finds any tenant's key on a connection named for another tenant, and leaves it so named", async () => {
    const keys = t.app.get(ApiKeysService);
    const setting = `SELECT current_setting('app.tenant_id', true) AS tenant`;
    await requestContext.run({ requestId: 'rls-key-lookup', tenantId: a.id }, async () => {
      for (const tenant of [b, a, b]) {
        expect((await keys.verify(tenant.apiKey))?.tenant.id).toBe(tenant.id);
        // The scope the function names for itself ends with it: the connection is still A's.
        expect(await preparedQuery(t.ds, 'rls_probe_setting', setting, [])).toEqual([{ tenant: a.id }]);
      }
    });
    // A key that does not match finds nothing, whichever tenant its prefix belongs to.
    const forged = `${b.apiKey.slice(0, -4)}${b.apiKey.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    expect(await requestContext.run({ requestId: 'rls-key-lookup', tenantId: a.id }, () => keys.verify(forged))).toBe(
      null,
    );
  });

  it("a tenant's requests, by API key or by token, do not rename the connections they take", async () => {
    const named: string[] = [];
    const query = pg.Client.prototype.query;
    // Every statement the service's connections send, to count the namings among them.
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
      if (text?.includes(`set_config('app.tenant_id'`)) named.push(text);
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    const requests = 12;
    try {
      for (let i = 0; i < requests; i++) {
        await t.http().get('/sdf').set('X-API-Key', a.apiKey).expect(200);
        await t
          .http()
          .get('/sdf')
          .set('Authorization', `Bearer ${t.tenantToken(a.id)}`)
          .expect(200);
      }
    } finally {
      pg.Client.prototype.query = query;
    }
    // Named for A once per connection taken (and now and then again after a sweep across tenants took
    // it); naming it for none before each authentication and for A after it would be four per pair.
    expect(named.length).toBeLessThan(requests);
  });

  it('the role can neither turn row-level security off nor change a table', async () => {
    await expect(
      t.ds.transaction(async (m) => {
        await m.query(`SET LOCAL row_security = off`);
        return m.query(`SELECT count(*) FROM documents`);
      }),
    ).rejects.toThrow(/row-level security/);
    await expect(t.ds.query(`ALTER TABLE documents DISABLE ROW LEVEL SECURITY`)).rejects.toThrow(/must be owner/);
    await expect(t.ds.query(`DROP POLICY tenant_isolation ON documents`)).rejects.toThrow(/must be owner/);
    await expect(t.ds.query(`ALTER TABLE documents ADD COLUMN x int`)).rejects.toThrow(/must be owner/);
  });
  it("an operator's request on tenant A's path acts for A: every transaction it opens names A alone", async () => {
    const seen: string[] = [];
    // Runs inside each transaction the requests below open, on the connection the pool named.
    const probe: EntitySubscriberInterface = {
      async afterTransactionStart(event: TransactionStartEvent) {
        if (!requestContext.get()?.requestId.startsWith('operator-on-a-')) return;
        const [row] = (await event.queryRunner.query(`SELECT current_setting('app.tenant_id', true) AS tenant`)) as {
          tenant: string | null;
        }[];
        seen.push(row?.tenant ?? '');
      },
    };
    t.ds.subscribers.push(probe);
    try {
      const admin = { Authorization: `Bearer ${t.adminToken()}` };
      await t
        .http()
        .post(`/admin/tenants/${a.id}/keys`)
        .set(admin)
        .set('X-Request-Id', 'operator-on-a-1')
        .send({ name: 'by the operator' })
        .expect(201);
      await t
        .http()
        .patch(`/admin/tenants/${a.id}`)
        .set(admin)
        .set('X-Request-Id', 'operator-on-a-2')
        .send({ name: 'Renamed by the operator' })
        .expect(200);
    } finally {
      t.ds.subscribers.splice(t.ds.subscribers.indexOf(probe), 1);
    }
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(new Set(seen)).toEqual(new Set([a.id]));
  });
});
