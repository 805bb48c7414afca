import pg from 'pg';
import type { DataSource } from 'typeorm';
import { requestContext } from '../common/request-context.js';

/** The tenant a pooled connection was last named for ('' for none), kept on the connection itself. */
const NAMED = Symbol('app.tenant_id');
type NamedClient = pg.PoolClient & { [NAMED]?: string };
type ConnectCallback = (
  err: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: unknown) => void,
) => void;

/**
 * The one place that hands out the service's connections, and so the one place that names the tenant to
 * PostgreSQL: every connection taken from the pool while a request or a job acts for a tenant (the
 * request context, filled by the authentication step and by each job) is first set to that tenant
 * (`app.tenant_id`, for the session), and one taken without a tenant (operators, sign-in before the
 * tenant is known, sweeps across tenants) is set to none. The row-level security policies then show and
 * accept that tenant's rows alone, whatever a statement forgets to say, in a transaction or not, through
 * TypeORM or the prepared statements alike (migration RowLevelSecurity). A connection already set to the
 * right tenant costs nothing more; one that changes tenant costs one statement.
 *
 * The tenant is read when the connection is asked for, in the caller's context: a connection handed on by
 * the pool from one request to the next is named for the one that asked.
 */
export class TenantScopedPool extends pg.Pool {
  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    if (!callback) {
      return new Promise((resolve, reject) => this.connect((err, client) => (err ? reject(err) : resolve(client!))));
    }
    const tenant = requestContext.get()?.tenantId ?? '';
    super.connect((err, client, done) => {
      if (err || !client) return callback(err, client, done);
      nameTenant(client, tenant).then(
        () => callback(undefined, client, done),
        (failed: Error) => {
          done(failed);
          callback(failed, undefined, () => undefined);
        },
      );
    });
  }

  /**
   * Runs a statement that names its own scope and so sees the same rows on a connection named for any
   * tenant (the API key lookup, `sdf_api_keys_by_prefix`): on the next free connection as it is, without
   * naming it. Not for anything else: a statement run here acts for whichever tenant the connection
   * happens to be named for.
   */
  async queryInOwnScope<T extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<T>> {
    const client = await new Promise<pg.PoolClient>((resolve, reject) =>
      super.connect((err, taken) => (err || !taken ? reject(err ?? new Error('no connection')) : resolve(taken))),
    );
    // As pg's own Pool.query: a connection lost while checked out fails the statement, not the process,
    // and a connection whose statement failed is not handed out again.
    const lost = () => undefined;
    client.on('error', lost);
    try {
      const result = await client.query<T>(config);
      client.off('error', lost);
      client.release();
      return result;
    } catch (err) {
      client.off('error', lost);
      client.release(err as Error);
      throw err;
    }
  }
}

async function nameTenant(client: NamedClient, tenant: string): Promise<void> {
  if ((client[NAMED] ?? '') === tenant) return;
  // The pool stops listening for a connection's errors when it hands it out, and its taker starts only
  // once it has it: a connection lost meanwhile (PostgreSQL going away) fails the statement below, and
  // its error event must not end the process.
  const lost = () => undefined;
  client.on('error', lost);
  try {
    await client.query(`SELECT set_config('app.tenant_id', $1, false)`, [tenant]);
  } finally {
    client.off('error', lost);
  }
  client[NAMED] = tenant;
}

/** The service's connection pool under a data source (every one is made with `tenantScopedPg`). */
export function tenantPool(ds: DataSource): TenantScopedPool {
  return (ds.driver as unknown as { master: TenantScopedPool }).master;
}

/** The `pg` module as TypeORM loads it, with the pool above in place of its own. */
export const tenantScopedPg: typeof pg = Object.assign(Object.create(pg) as typeof pg, { Pool: TenantScopedPool });

/**
 * Runs `work` acting for `tenantId`: the connections it takes see only that tenant's rows, and its log
 * lines name the tenant and `requestId` (a job's public id).
 */
export function actingForTenant<T>(tenantId: string | undefined, work: () => T, requestId: string): T {
  if (!tenantId) return work();
  const current = requestContext.get();
  return requestContext.run({ requestId: current?.requestId ?? requestId, tenantId }, work);
}
