import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adminClient, dropDatabase, testDatabaseUrl } from './helpers/database.js';
import { distMain, requireBuild, runNode, startNode, stop } from './helpers/processes.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('npm start on a fresh machine', () => {
  const database = `sdf_test_boot_${randomBytes(4).toString('hex')}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'sdf-boot-'));

  afterAll(async () => {
    await dropDatabase(database);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates its database, runs migrations, generates secrets once and serves /health', async () => {
    requireBuild(distMain);
    const env = {
      PATH: process.env.PATH,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: testDatabaseUrl(database),
      REDIS_URL,
      REDIS_PREFIX: `sdft_boot_${randomBytes(4).toString('hex')}`,
      SECRETS_FILE: join(dataDir, 'secrets.json'),
      STORAGE_LOCAL_DIR: join(dataDir, 'storage'),
    };
    const { child, line } = await startNode([distMain], env, (l) => l.includes('"msg":"listening"'));
    try {
      const url = (JSON.parse(line) as { url: string }).url;
      const health = await fetch(`${url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok', version: expect.any(String) });
      expect(statSync(env.SECRETS_FILE).mode & 0o777).toBe(0o600);
    } finally {
      await stop(child);
    }
    const client = await adminClient();
    try {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
      expect(found.rowCount).toBe(1);
    } finally {
      await client.end();
    }
  });

  it('refuses to start on a bad configuration and lists every problem', async () => {
    requireBuild(distMain);
    const result = await runNode([distMain], {
      PATH: process.env.PATH,
      PORT: 'http',
      PROCESS_ROLE: 'everything',
      DEPLOYMENT_MODE: 'managed',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid configuration');
    for (const name of ['PORT', 'PROCESS_ROLE', 'JWT_SECRET', 'ADMIN_JWT_SECRET', 'MASTER_KEY'])
      expect(result.stderr).toContain(name);
  });
});
