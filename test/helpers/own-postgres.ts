import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { runMigrations } from '../../src/database/data-source.js';
import { freePort } from './processes.js';

const run = promisify(execFile);
const BIN = process.env.TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/**
 * A PostgreSQL cluster of the test's own, in a temporary folder on a free port, which the test may stop
 * and start to cause a real outage (the machine's shared server is never touched). PostgreSQL refuses
 * to run as root, so as root the cluster belongs to the `postgres` user.
 */
export class OwnPostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly asUser: string | null,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/sdf`;
  }

  static async create(): Promise<OwnPostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'sdf-own-pg-'));
    const asUser = process.getuid?.() === 0 ? 'postgres' : null;
    if (asUser) {
      const { stdout } = await run('id', ['-u', asUser]);
      const { stdout: gid } = await run('id', ['-g', asUser]);
      chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
    }
    const own = new OwnPostgres(dir, await freePort(), asUser);
    await own.pg('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
    await own.start();
    const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${own.port}/postgres` });
    await admin.connect();
    try {
      await admin.query('CREATE DATABASE sdf');
    } finally {
      await admin.end();
    }
    await runMigrations(own.url);
    return own;
  }

  async start(): Promise<void> {
    await this.pg('pg_ctl', [
      '-D',
      join(this.dir, 'data'),
      '-l',
      join(this.dir, 'server.log'),
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      '-w',
      'start',
    ]);
  }

  /** A fast shutdown: every connection is cut, as when the server goes away. */
  async stop(): Promise<void> {
    await this.pg('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'stop']);
  }

  async remove(): Promise<void> {
    await this.stop().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async pg(program: string, args: string[]): Promise<void> {
    const path = join(BIN, program);
    if (this.asUser) await run('runuser', ['-u', this.asUser, '--', path, ...args]);
    else await run(path, args);
  }
}
