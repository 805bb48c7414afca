import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { runMigrations } from '../../src/database/data-source.js';
import { freePort } from './processes.js';

const run = promisify(execFile);

/** The newest PostgreSQL server programs installed (Debian keeps each major version under its own folder). */
function serverBin(): string {
  if (process.env.TEST_PG_BIN) return process.env.TEST_PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error(`no PostgreSQL server programs under ${root}; set TEST_PG_BIN`);
  return join(root, newest, 'bin');
}
const BIN = serverBin();

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

  /** The server dies at once (SIGKILL of the postmaster), as in a crash; `start()` then recovers it. */
  async kill(): Promise<void> {
    const pidFile = join(this.dir, 'data', 'postmaster.pid');
    if (!existsSync(pidFile)) return;
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return;
    }
    while (isAlive(pid)) await new Promise((r) => setTimeout(r, 20));
    // The postmaster's children notice and exit; the next start recovers from the WAL.
    await new Promise((r) => setTimeout(r, 200));
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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
