import type { Pool, QueryResultRow } from 'pg';
import type { DataSource, EntityManager } from 'typeorm';

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
  const pool = (ds.driver as unknown as { master: Pool }).master;
  return (await pool.query<T>({ name, text, values })).rows;
}
