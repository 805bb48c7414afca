import pg from 'pg';
import { waitUntil } from './wait.js';

/** A lock held by a transaction of its own, on its own connection, until `release`; `pid` is its backend. */
export interface HeldLock {
  pid: number;
  release: () => Promise<void>;
}

/** Takes `lock` (a LOCK or SELECT ... FOR UPDATE statement) in a transaction opened on `url` and holds it. */
export async function holdLock(url: string, lock: string): Promise<HeldLock> {
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query(lock);
  const pid = (await holder.query<{ pid: number }>(`SELECT pg_backend_pid() AS pid`)).rows[0]!.pid;
  return {
    pid,
    release: async () => {
      await holder.query('COMMIT');
      await holder.end();
    },
  };
}

/** Waits until some statement of the server is blocked by the backend `pid` (a service's step reached the lock). */
export function waitOnLock(db: pg.Client, pid: number, what: string): Promise<unknown> {
  return waitUntil(
    async () =>
      (await db.query(`SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, [pid])).rowCount === 1,
    what,
    30_000,
  );
}

/** The storage changes not yet counted in the usage meter. */
export async function uncountedStorageChanges(db: pg.Client): Promise<{ document_id: string; delta_bytes: string }[]> {
  return (
    await db.query<{ document_id: string; delta_bytes: string }>(`SELECT document_id, delta_bytes FROM storage_changes`)
  ).rows;
}
