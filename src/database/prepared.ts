import type { QueryResultRow } from 'pg';
import type { DataSource, EntityManager } from 'typeorm';
import { tenantPool } from './tenant-scope.js';

/**
 * A statement on the path of every upload or request, run as a named prepared statement: each pooled
 * connection parses and plans it once instead of on every call, and the call skips TypeORM's query
 * runner. Outside a transaction only; `name` must always go with the same `text`. With a manager (a
 * transaction's), the statement runs through it, unprepared.
 */
export async function preparedQuery<T extends QueryResultRow>(
  ds: DataSource,
  name: string,
  text: string,
  values: unknown[],
  manager?: EntityManager,
): Promise<T[]> {
  if (manager && manager !== ds.manager) return (await manager.query(text, values)) as T[];
  const pool = tenantPool(ds);
  return (await pool.query<T>({ name, text, values })).rows;
}

/** Runs one statement of a `preparedTransaction`, prepared under `name` on its connection. */
export type PreparedRunner = <T extends QueryResultRow>(name: string, text: string, values: unknown[]) => Promise<T[]>;

/**
 * A transaction on one pooled connection whose statements are named prepared statements (as
 * `preparedQuery`'s), for a job on every upload's or signature's path: BEGIN and COMMIT as the only
 * statements besides the work, without TypeORM's query runner. On any error the transaction is rolled
 * back; a connection that cannot roll back is discarded, never returned to the pool mid-transaction.
 */
export async function preparedTransaction<T>(ds: DataSource, work: (query: PreparedRunner) => Promise<T>): Promise<T> {
  const pool = tenantPool(ds);
  const client = await pool.connect();
  // A checked-out connection that drops emits 'error' (the pool listens on idle ones only): the
  // statement in flight fails with it, so it is noted here rather than left to crash the process.
  let lost: Error | undefined;
  const onError = (err: Error) => (lost = err);
  client.on('error', onError);
  const release = (broken?: Error) => {
    client.off('error', onError);
    client.release(broken ?? lost);
  };
  try {
    await client.query('BEGIN');
  } catch (err) {
    release(err as Error);
    throw err;
  }
  try {
    const result = await work(async (name, text, values) => (await client.query({ name, text, values })).rows);
    await client.query('COMMIT');
    release();
    return result;
  } catch (err) {
    let broken: Error | undefined;
    await client.query('ROLLBACK').catch((rollback: Error) => (broken = rollback));
    release(broken);
    throw err;
  }
}
