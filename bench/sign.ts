/**
 * Signing jobs per second beside `signArchive()` of the same file in a loop, in the same run.
 *
 * The service figure: BENCH_SIGNS valid documents are asked to be signed at once (POST /sign/:id each),
 * and the clock runs until PostgreSQL shows every one `signed` (one process, PROCESS_ROLE all). The
 * baseline: `signArchive()` with the same key type, BENCH_SIGNS times, one after the other.
 *
 *   npm run bench:sign        (BENCH_SIGNS, default 200)
 *
 * Needs the local PostgreSQL and Redis; makes and drops its own database.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { signAdminToken } from '../src/auth/tokens.js';
import { createApp, prepareDatabase } from '../src/bootstrap.js';
import { JsonLogger } from '../src/common/logger.js';
import { AppConfig } from '../src/config/app-config.js';
import { DEFAULT_LIMITS, generateKeyPair, pack, signArchive } from '../src/sdf/index.js';
import { INVOICE_SCHEMA, invoiceData } from '../src/sdf/testing/build-sdf.js';
import { blankPdf } from '../src/sdf/testing/pdf-builder.js';

const SIGNS = Number(process.env.BENCH_SIGNS ?? 200);
const FILE_BYTES = 100 * 1024;

async function waitFor(db: pg.Client, tenantId: string, status: string, count: number): Promise<void> {
  for (;;) {
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM documents WHERE tenant_id = $1 AND status = $2`,
      [tenantId, status],
    );
    if (Number(rows[0]!.n) >= count) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function main(): Promise<void> {
  const dbName = `sdf_bench_${randomBytes(4).toString('hex')}`;
  const base = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  base.pathname = `/${dbName}`;
  const storage = mkdtempSync(join(tmpdir(), 'sdf-bench-storage-'));
  const config = AppConfig.fromEnv({
    ...process.env,
    DATABASE_URL: base.toString(),
    REDIS_PREFIX: `sdfbench_${randomBytes(4).toString('hex')}`,
    STORAGE_LOCAL_DIR: storage,
    JWT_SECRET: randomBytes(32).toString('hex'),
    ADMIN_JWT_SECRET: randomBytes(32).toString('hex'),
    MASTER_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'silent',
  });
  const logger = new JsonLogger('silent');
  await prepareDatabase(config, logger);
  const app = await createApp(config, logger);
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const db = new pg.Client({ connectionString: base.toString() });
  await db.connect();
  try {
    const admin = {
      Authorization: `Bearer ${signAdminToken(config.secrets.adminJwtSecret, 'bench', 600)}`,
      'Content-Type': 'application/json',
    };
    const tenant = (await (
      await fetch(`${url}/admin/tenants`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: 'Sign', slug: `sign-${Date.now()}`, rate_limit_rpm: 1_000_000 }),
      })
    ).json()) as { id: string };
    const key = (await (
      await fetch(`${url}/admin/tenants/${tenant.id}/keys`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: 'bench' }),
      })
    ).json()) as { key: string };
    const auth = { 'X-API-Key': key.key };
    const { archive } = await pack({
      data: invoiceData(),
      schema: INVOICE_SCHEMA as unknown as Record<string, unknown>,
      meta: { document_type: 'invoice', issuer: 'Bench GmbH', schema_id: 'invoice/v1' },
      pdf: blankPdf(),
      vendor: { 'padding.bin': randomBytes(FILE_BYTES - 2048) },
    });

    // The documents to sign: uploaded and validated before the clock starts.
    const ids: string[] = [];
    for (let i = 0; i < SIGNS; i++) {
      const body = new FormData();
      body.append('file', new Blob([archive]), 'sign.sdf');
      const res = await fetch(`${url}/upload`, { method: 'POST', headers: auth, body });
      if (res.status !== 201) throw new Error(`upload answered ${res.status}`);
      ids.push(((await res.json()) as { id: string }).id);
    }
    await waitFor(db, tenant.id, 'valid', SIGNS);

    // Baseline: the format core's signing of the same file, ECDSA-P256 as the tenant's key.
    const pair = generateKeyPair('ECDSA-P256', 'bench');
    const t0 = performance.now();
    for (let i = 0; i < SIGNS; i++) {
      await signArchive(archive, {
        privateKeyPem: pair.privateKeyPem,
        algorithm: 'ECDSA-P256',
        keyId: 'bench',
        limits: DEFAULT_LIMITS,
      });
    }
    const baseRate = (SIGNS / (performance.now() - t0)) * 1000;

    const t1 = performance.now();
    await Promise.all(
      ids.map(async (id) => {
        const res = await fetch(`${url}/sign/${id}`, { method: 'POST', headers: auth });
        if (res.status !== 202) throw new Error(`sign answered ${res.status}`);
        await res.arrayBuffer();
      }),
    );
    const accepted = performance.now() - t1;
    await waitFor(db, tenant.id, 'signed', SIGNS);
    const serviceRate = (SIGNS / (performance.now() - t1)) * 1000;
    console.log(`file: ${archive.length} bytes; ${SIGNS} signatures (ECDSA-P256)`);
    console.log(`signArchive() in a loop: ${baseRate.toFixed(1)}/s`);
    console.log(`signing jobs (POST /sign/:id to signed): ${serviceRate.toFixed(1)}/s`);
    console.log(`ratio: ${(serviceRate / baseRate).toFixed(2)} (every 202 answered after ${accepted.toFixed(0)} ms)`);
    console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
  } finally {
    await db.end();
    await app.close();
    rmSync(storage, { recursive: true, force: true });
    const client = new pg.Client({
      connectionString: (() => {
        const u = new URL(base);
        u.pathname = '/postgres';
        return u.toString();
      })(),
    });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    await client.end();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
