import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import superagent from 'superagent';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { inject } from 'vitest';
import { signAdminToken, signTenantToken } from '../../src/auth/tokens.js';
import { createApp } from '../../src/bootstrap.js';
import type { Clock } from '../../src/common/clock.js';
import { JsonLogger } from '../../src/common/logger.js';
import { AppConfig } from '../../src/config/app-config.js';
import { createDatabaseFromTemplate, dropDatabase, testDatabaseUrl } from './database.js';

export interface TestApp {
  app: INestApplication;
  config: AppConfig;
  /** supertest against this instance. */
  http: () => ReturnType<typeof request>;
  ds: DataSource;
  adminToken: () => string;
  tenantToken: (tenantId: string, sub?: string, ttlSeconds?: number) => string;
  close: () => Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  /** A second instance on the same database, Redis prefix and storage (as two API processes would be). */
  shareWith?: TestApp;
  /** Receives every log line (JSON) of this instance; the level then defaults to debug. */
  logSink?: (line: string) => void;
  /** The service's clock (billing periods); share one between instances to move them together. */
  clock?: Clock;
}

/**
 * An event stream (GET /events) never ends by itself: through supertest a request answers with the
 * stream's status and headers, and the stream is closed at once. test/helpers/sse.ts reads streams.
 */
(superagent as unknown as { parse: Record<string, unknown> }).parse['text/event-stream'] = (
  res: import('node:http').IncomingMessage,
  done: (err: Error | null, body: unknown) => void,
) => {
  res.destroy();
  done(null, {});
};

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Boots the real application against its own PostgreSQL database (copied from the migrated template)
 * and its own Redis key prefix; `close()` removes both.
 */
export async function startApp(options: StartOptions = {}): Promise<TestApp> {
  const shared = options.shareWith?.config.env;
  const owner = !shared;
  const database = shared ? null : await createDatabaseFromTemplate(inject('templateDatabase'));
  const storageDir = shared?.STORAGE_LOCAL_DIR ?? mkdtempSync(join(tmpdir(), 'sdf-test-storage-'));
  const env: Record<string, string> = {
    DATABASE_URL: shared?.DATABASE_URL ?? testDatabaseUrl(database!),
    DATABASE_AUTO_CREATE: 'false',
    DATABASE_RUN_MIGRATIONS: 'false',
    DATABASE_POOL_SIZE: '5',
    // The service's own role, as in production: every test runs under row-level security, and `ds`
    // reaches the database as that role too (fixtures without a tenant see every row). A file that
    // changes tables or roles, or checks what the owner meets, starts as the owner (DATABASE_APP_ROLE '');
    // an instance sharing another's database takes its role.
    DATABASE_APP_ROLE: shared?.DATABASE_APP_ROLE ?? process.env.TEST_DATABASE_APP_ROLE ?? 'sdf_app',
    REDIS_URL,
    REDIS_PREFIX: shared?.REDIS_PREFIX ?? `sdft_${randomBytes(5).toString('hex')}`,
    JWT_SECRET: options.shareWith?.config.secrets.jwtSecret ?? randomBytes(32).toString('hex'),
    ADMIN_JWT_SECRET: options.shareWith?.config.secrets.adminJwtSecret ?? randomBytes(32).toString('hex'),
    MASTER_KEY: shared?.MASTER_KEY ?? randomBytes(32).toString('base64'),
    STORAGE_LOCAL_DIR: storageDir,
    LOG_LEVEL: options.logSink ? 'debug' : (process.env.TEST_LOG_LEVEL ?? 'silent'),
    // Every request of a test comes from one address; a test of the per-address throttle sets its own.
    AUTH_ROUTE_LIMIT_PER_ADDRESS: '100000',
    ...options.env,
  };
  const config = AppConfig.fromEnv(env);
  const app = await createApp(config, new JsonLogger(config.env.LOG_LEVEL, options.logSink), { clock: options.clock });
  const ds = app.get(DataSource);
  const server = app.getHttpServer();
  return {
    app,
    config,
    ds,
    http: () => request(server),
    adminToken: () => signAdminToken(config.secrets.adminJwtSecret, 'test-operator', 600),
    tenantToken: (tenantId, sub = 'user-1', ttl = 600) =>
      signTenantToken(config.secrets.jwtSecret, { tenant_id: tenantId, sub }, ttl),
    close: async () => {
      await app.close();
      if (!owner) return;
      await dropDatabase(database!);
      await deleteRedisPrefix(env.REDIS_PREFIX);
      rmSync(storageDir, { recursive: true, force: true });
    },
  };
}

async function deleteRedisPrefix(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** The environment under which the built `sdf admin` commands reach the same database, Redis, secrets and storage as `t`. */
export function cliEnvOf(t: TestApp): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    DATABASE_URL: t.config.env.DATABASE_URL,
    REDIS_URL: t.config.env.REDIS_URL,
    REDIS_PREFIX: t.config.env.REDIS_PREFIX,
    JWT_SECRET: t.config.secrets.jwtSecret,
    ADMIN_JWT_SECRET: t.config.secrets.adminJwtSecret,
    MASTER_KEY: t.config.env.MASTER_KEY,
    STORAGE_LOCAL_DIR: t.config.env.STORAGE_LOCAL_DIR,
  };
}
