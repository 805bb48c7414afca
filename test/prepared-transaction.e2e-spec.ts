import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparedQuery, preparedTransaction } from '../src/database/prepared.js';
import { startApp, type TestApp } from './helpers/app.js';

/** `preparedTransaction` against the real PostgreSQL: commit, rollback, and a connection that breaks mid-way. */
describe('preparedTransaction', () => {
  let t: TestApp;
  const insert = 'INSERT INTO prepared_tx_probe (n) VALUES ($1) RETURNING n';
  const rows = async () =>
    ((await t.ds.query('SELECT n FROM prepared_tx_probe ORDER BY n')) as { n: number }[]).map((r) => r.n);
  const idleInTransaction = async () =>
    Number(
      (
        (await t.ds.query(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
        )) as { n: string }[]
      )[0]!.n,
    );

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
    await expect(
      preparedTransaction(t.ds, async (query) => {
        await query('probe_insert', insert, [3]);
        throw new Error('the file could not be stored');
      }),
    ).rejects.toThrow('the file could not be stored');
    // A failing statement too (a duplicate key): the first insert goes with it.
    await expect(
      preparedTransaction(t.ds, async (query) => {
        await query('probe_insert', insert, [4]);
        await query('probe_insert', insert, [1]);
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect(await rows()).toEqual([1, 2]);
    expect(await idleInTransaction()).toBe(0);
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
