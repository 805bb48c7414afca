import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparedQuery, preparedTransaction } from '../src/database/prepared.js';
import { startApp, type TestApp } from './helpers/app.js';

/** `preparedTransaction` against the real PostgreSQL: commit, rollback, and a connection that breaks mid-way. */
describe('preparedTransaction', () => {
  let t: TestApp;
  const insert = 'INSERT INTO prepared_tx_probe (n) VALUES ($1) RETURNING n';
  const rows = async () =>
    ((await t.ds.query('SELECT n FROM prepared_tx_probe ORDER BY n')) as { n: number }[]).map((r) => r.n);
  /** Of these backends, those left inside a transaction (the service's own background work is not asked about). */
  const idleInTransaction = async (pids: number[]) =>
    Number(
      (
        (await t.ds.query(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE pid = ANY($1::int[]) AND state LIKE 'idle in transaction%'`,
          [pids],
        )) as { n: string }[]
      )[0]!.n,
    );
  const pidProbe = 'SELECT pg_backend_pid() AS pid';

  beforeAll(async () => {
    // As the owner: the test makes a table of its own.
    t = await startApp({ env: { DATABASE_APP_ROLE: '' } });
    await t.ds.query('CREATE TABLE prepared_tx_probe (n int PRIMARY KEY)');
  });
  afterAll(() => t.close());

  it('commits the work and answers what it returned', async () => {
    const out = await preparedTransaction(t.ds, async (query) => {
      await query('probe_insert', insert, [1]);
      return (await query<{ n: number }>('probe_insert', insert, [2]))[0]!.n;
    });
    expect(out).toBe(2);
    expect(await rows()).toEqual([1, 2]);
  });

  it('rolls everything back when the work throws, and the connection goes back clean', async () => {
    const used: number[] = [];
    await expect(
      preparedTransaction(t.ds, async (query) => {
        used.push((await query<{ pid: number }>('probe_pid', pidProbe, []))[0]!.pid);
        await query('probe_insert', insert, [3]);
        throw new Error('the file could not be stored');
      }),
    ).rejects.toThrow('the file could not be stored');
    // A failing statement too (a duplicate key): the first insert goes with it.
    await expect(
      preparedTransaction(t.ds, async (query) => {
        used.push((await query<{ pid: number }>('probe_pid', pidProbe, []))[0]!.pid);
        await query('probe_insert', insert, [4]);
        await query('probe_insert', insert, [1]);
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect(await rows()).toEqual([1, 2]);
    // The connections these transactions ran on are back in the pool, outside any transaction.
    expect(used).toHaveLength(2);
    expect(await idleInTransaction(used)).toBe(0);
    expect(await preparedQuery(t.ds, 'probe_count', 'SELECT count(*)::int AS c FROM prepared_tx_probe', [])).toEqual([
      { c: 2 },
    ]);
  });

  it('a connection lost mid-transaction is an error and is not handed out again', async () => {
    await expect(
      preparedTransaction(t.ds, async (query) => {
        await query('probe_insert', insert, [5]);
        await query('probe_kill_self', 'SELECT pg_terminate_backend(pg_backend_pid())', []);
      }),
    ).rejects.toThrow();
    expect(await rows()).toEqual([1, 2]);
    // Every later transaction runs on a live connection.
    for (let i = 0; i < 12; i++) {
      await preparedTransaction(t.ds, (query) => query('probe_insert', insert, [10 + i]));
    }
    expect((await rows()).length).toBe(14);
  });
});
