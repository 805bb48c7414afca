/**
 * What the service benchmarks share: a database, Redis prefix, storage folder and secrets of their own
 * (made at the start, removed at the end), the service started in this process, a tenant with an API
 * key, and the ~100 KB invoice archive they upload.
 */
import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { INestApplication } from '@nestjs/common';
import pg from 'pg';
import { signAdminToken } from '../src/auth/tokens.js';
import { createApp, prepareDatabase } from '../src/bootstrap.js';
import { JsonLogger } from '../src/common/logger.js';
import { AppConfig } from '../src/config/app-config.js';
import { pack } from '../src/sdf/index.js';
import { INVOICE_SCHEMA, invoiceData } from '../src/sdf/testing/build-sdf.js';
import { blankPdf } from '../src/sdf/testing/pdf-builder.js';

export interface BenchSetup {
  /** The environment of the service under test (for child processes too). */
  env: NodeJS.ProcessEnv;
  config: AppConfig;
  logger: JsonLogger;
  /** A connection to the bench's database, for making rows and watching statuses. */
  db: pg.Client;
  /** Closes `db`, removes the storage folder and drops the database. */
  cleanup: () => Promise<void>;
}

/** A migrated database and the configuration around it; `overrides` go into the environment. */
export async function benchSetup(overrides: NodeJS.ProcessEnv = {}): Promise<BenchSetup> {
  const dbName = `sdf_bench_${randomBytes(4).toString('hex')}`;
  const databaseUrl = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  databaseUrl.pathname = `/${dbName}`;
  const storage = mkdtempSync(join(tmpdir(), 'sdf-bench-storage-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl.toString(),
    REDIS_PREFIX: `sdfbench_${randomBytes(4).toString('hex')}`,
    STORAGE_LOCAL_DIR: storage,
    JWT_SECRET: randomBytes(32).toString('hex'),
    ADMIN_JWT_SECRET: randomBytes(32).toString('hex'),
    MASTER_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'silent',
    // The benches drive one tenant with up to 64 clients at once: throughput, not the per-tenant bound.
    UPLOADS_IN_FLIGHT_PER_TENANT: '1000',
    ...overrides,
  };
  const config = AppConfig.fromEnv(env);
  const logger = new JsonLogger(config.env.LOG_LEVEL, () => undefined);
  await prepareDatabase(config, logger);
  const db = new pg.Client({ connectionString: databaseUrl.toString() });
  await db.connect();
  const cleanup = async () => {
    await db.end().catch(() => undefined);
    rmSync(storage, { recursive: true, force: true });
    const server = new URL(databaseUrl);
    server.pathname = '/postgres';
    const admin = new pg.Client({ connectionString: server.toString() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    await admin.end();
  };
  return { env, config, logger, db, cleanup };
}

/** The service in this process, listening on a loopback port. */
export async function startInProcess(setup: BenchSetup): Promise<{ app: INestApplication; url: string }> {
  const app = await createApp(setup.config, setup.logger);
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));

/**
 * The built service (dist/src/main.js) in a process of its own with a role; resolves with its URL (api,
 * all) once it logs that it is up. The caller ends it (SIGTERM). Its log goes to a file, as to a log
 * collector elsewhere: this process reads only up to the line that says it is up, so reading the log
 * of every request does not take CPU from the service on the machine it is measured on.
 */
export function startProcess(
  role: 'api' | 'worker' | 'all',
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; url?: string }> {
  // BENCH_PROFILE_DIR: each service process writes its CPU profile there when it ends.
  const profile = process.env.BENCH_PROFILE_DIR;
  // A deprecation the service runs into is printed with the stack that reached it.
  const args = [
    '--trace-deprecation',
    ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`, '--cpu-prof-interval=250'] : []),
  ];
  const logDir = mkdtempSync(join(tmpdir(), `sdf-bench-${role}-log-`));
  const logPath = join(logDir, 'service.log');
  const logFd = openSync(logPath, 'w');
  const child = spawn(process.execPath, [...args, MAIN], {
    env: { ...env, PROCESS_ROLE: role, LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', logFd, 'inherit'],
  });
  closeSync(logFd);
  child.once('exit', () => rmSync(logDir, { recursive: true, force: true }));
  return new Promise((resolve, reject) => {
    const failed = (code: number | null) => {
      clearInterval(poll);
      reject(new Error(`${role} process exited with ${code}`));
    };
    child.on('exit', failed);
    const poll = setInterval(() => {
      for (const line of readFileSync(logPath, 'utf8').split('\n')) {
        const up = line.includes('"msg":"listening"') || line.includes('"msg":"worker started"');
        if (!up) continue;
        clearInterval(poll);
        child.off('exit', failed);
        const url = line.includes('"msg":"listening"') ? (JSON.parse(line) as { url: string }).url : undefined;
        resolve({ child, ...(url ? { url: url.replace('[::1]', '127.0.0.1') } : {}) });
        return;
      }
    }, 25);
  });
}

/** Ends processes started by `startProcess` and waits until they are gone. */
export async function stopProcesses(children: ChildProcess[]): Promise<void> {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
}

/** Headers of an operator request (a short-lived admin JWT). */
export function adminHeaders(config: AppConfig): Record<string, string> {
  return {
    Authorization: `Bearer ${signAdminToken(config.secrets.adminJwtSecret, 'bench', 3600)}`,
    'Content-Type': 'application/json',
  };
}

/** A tenant whose rate limit the load never reaches, and an API key of it. */
export async function benchTenant(url: string, config: AppConfig, name: string): Promise<{ id: string; key: string }> {
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: adminHeaders(config),
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const slug = `${name.toLowerCase()}-${randomBytes(4).toString('hex')}`;
  const tenant = await call('/admin/tenants', { name, slug, rate_limit_rpm: 1_000_000 });
  const key = await call(`/admin/tenants/${String(tenant.id)}/keys`, { name: 'bench' });
  return { id: String(tenant.id), key: String(key.key) };
}

/** The invoice the upload and signing benchmarks send: a valid archive padded to `bytes`. */
export async function benchArchive(bytes = 100 * 1024): Promise<Buffer> {
  const { archive } = await pack({
    data: invoiceData(),
    schema: INVOICE_SCHEMA as unknown as Record<string, unknown>,
    meta: { document_type: 'invoice', issuer: 'Bench GmbH', schema_id: 'invoice/v1' },
    pdf: blankPdf(),
    vendor: { 'padding.bin': randomBytes(bytes - 2048) },
  });
  return archive;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The median of values in any order (of an even count, the upper of the middle two). */
export function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/**
 * A figure of every process on the machine so far (from its pid and its /proc stat line), by group:
 * the processes named in `own` under their label, PostgreSQL's and Redis's server processes, and this
 * process as `bench` (its clients); the rest as `other`. Two readings subtracted give where a phase's
 * share went.
 */
function byGroup(
  own: Record<string, number | undefined>,
  figure: (pid: string, stat: string) => number,
): Map<string, number> {
  const labels = new Map<number, string>([[process.pid, 'bench']]);
  for (const [label, pid] of Object.entries(own)) if (pid !== undefined) labels.set(pid, label);
  const out = new Map<string, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    let value: number;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      value = figure(name, stat);
    } catch {
      continue; // ended meanwhile
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const group =
      labels.get(Number(name)) ??
      (comm.startsWith('postgres') ? 'postgres' : comm.startsWith('redis') ? 'redis' : 'other');
    out.set(group, (out.get(group) ?? 0) + value);
  }
  return out;
}

/** CPU time (user + system, in ms) by group (see byGroup). */
export function cpuByGroup(own: Record<string, number | undefined> = {}): Map<string, number> {
  return byGroup(own, (_pid, stat) => {
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, USER_HZ 100
  });
}

/**
 * Write system calls (write, writev and the like, to files and sockets alike: `syscw` of /proc/<pid>/io)
 * by group (see byGroup). send() is not among them, and PostgreSQL answers its clients with it. On a
 * virtual machine each write to a loopback socket costs the kernel far more than the bytes it carries,
 * so their count per request is a figure of its own.
 */
export function writesByGroup(own: Record<string, number | undefined> = {}): Map<string, number> {
  return byGroup(own, (pid) => {
    const m = /syscw: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return m ? Number(m[1]) : 0;
  });
}

/** The kinds of the machine's CPU time, in the order of /proc/stat. */
export const MACHINE_TIMES = ['user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal'] as const;

/** The machine's CPU time so far by kind (MACHINE_TIMES), in ms: the first line of /proc/stat, USER_HZ 100. */
export function machineTimes(): number[] {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9);
  return fields.map((ticks) => Number(ticks) * 10);
}

/** `after` minus `before`, per group, divided by `n` (per item: ms of CPU, calls), largest first. */
export function perItem(before: Map<string, number>, after: Map<string, number>, n: number): [string, number][] {
  return [...after]
    .map(([group, ms]): [string, number] => [group, (ms - (before.get(group) ?? 0)) / n])
    .filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1]);
}

/** Runs a benchmark's main and exits non-zero on failure. */
export function run(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
