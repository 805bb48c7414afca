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

/** Where a process dies after its storage change committed: before the count, or after it but before its row went. */
export type CountKillPoint = 'before-count' | 'before-delete';

/**
 * Starts an operation that writes a storage change (`start`: a delete or a signing) and kills `victim`
 * (SIGKILL) after the operation's commit: while its count waits on Redis (`before-count`), or once the
 * count is made in Redis and the deletion of its row waits on a lock (`before-delete`). Returns the
 * change's bytes, still uncounted by the dead process.
 */
export async function killBetweenCommitAndCount(options: {
  db: pg.Client;
  url: string;
  redis: { call(...args: string[]): Promise<unknown> };
  victim: { kill(): Promise<unknown> };
  start: () => Promise<unknown>;
  /** What the operation is, for a failed wait ("the delete", "the sign job"). */
  what: string;
  committed: () => Promise<boolean>;
  documentId: string;
  when: CountKillPoint;
}): Promise<number> {
  const { db, url, redis, victim, what, when } = options;
  // The operation records the change in its transaction: that insert waits for this lock, before the commit.
  const commit = await holdLock(url, `LOCK TABLE storage_changes IN SHARE MODE`);
  try {
    await options.start();
    await waitOnLock(db, commit.pid, `${what} to wait before its commit`);
    await redis.call('CLIENT', 'PAUSE', '60000', 'WRITE');
  } finally {
    await commit.release();
  }
  let paused = true;
  try {
    await waitUntil(options.committed, `${what} committed`, 30_000);
    if (when === 'before-delete') {
      // The count locks its row (FOR UPDATE, which this lock lets through) and deletes it after Redis
      // counted: the deletion waits here.
      const count = await holdLock(url, `LOCK TABLE storage_changes IN SHARE MODE`);
      try {
        await redis.call('CLIENT', 'UNPAUSE');
        paused = false;
        await waitOnLock(db, count.pid, 'the count made, its row deletion waiting');
        await victim.kill();
      } finally {
        await count.release();
      }
    } else {
      // Committed while no Redis write can happen: the count has not been made.
      await victim.kill();
    }
  } finally {
    if (paused) await redis.call('CLIENT', 'UNPAUSE');
  }
  const change = (await uncountedStorageChanges(db)).find((c) => c.document_id === options.documentId);
  if (!change) throw new Error(`${what}: no uncounted storage change for ${options.documentId}`);
  return Number(change.delta_bytes);
}
