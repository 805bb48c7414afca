/**
 * What the service benchmarks share: a database, Redis prefix, storage folder and secrets of their own
 * (made at the start, removed at the end), the service started in this process, a tenant with an API
 * key, and the ~100 KB invoice archive they upload.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/** Runs a benchmark's main and exits non-zero on failure. */
export function run(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
