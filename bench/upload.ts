/**
 * Upload throughput and upload-to-valid latency of the service beside a bare baseline (a plain Node
 * HTTP server that only streams the body to disk), in the same run, at 1, 8 and 32 concurrent clients.
 *
 *   node --import ./bench/register.mjs bench/upload.ts   (or build first and run dist/bench/upload.js)
 *
 * Needs the local PostgreSQL and Redis (DATABASE_URL / REDIS_URL); makes and drops its own database.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { signAdminToken } from '../src/auth/tokens.js';
import { createApp, prepareDatabase } from '../src/bootstrap.js';
import { JsonLogger } from '../src/common/logger.js';
import { AppConfig } from '../src/config/app-config.js';
import { pack } from '../src/sdf/index.js';
import { INVOICE_SCHEMA, invoiceData } from '../src/sdf/testing/build-sdf.js';
import { blankPdf } from '../src/sdf/testing/pdf-builder.js';

const LEVELS = [1, 8, 32];
const PER_LEVEL = Number(process.env.BENCH_UPLOADS ?? 160);
const FILE_BYTES = 100 * 1024;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function runClients(concurrency: number, total: number, one: () => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) await one();
    }),
  );
  return (total / (performance.now() - started)) * 1000;
}

function form(archive: Buffer): FormData {
  const body = new FormData();
  body.append('file', new Blob([archive]), 'bench.sdf');
  return body;
}

async function baselineServer(dir: string): Promise<Server> {
  let n = 0;
  const server = createServer((req, res) => {
    pipeline(req, createWriteStream(join(dir, `${n++}.bin`))).then(
      () => res.writeHead(201).end('{}'),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}

async function main(): Promise<void> {
  const dbName = `sdf_bench_${randomBytes(4).toString('hex')}`;
  const base = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  base.pathname = `/${dbName}`;
  const storage = mkdtempSync(join(tmpdir(), 'sdf-bench-storage-'));
  const baselineDir = mkdtempSync(join(tmpdir(), 'sdf-bench-baseline-'));
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
  const baseline = await baselineServer(baselineDir);
  const baselineUrl = `http://127.0.0.1:${(baseline.address() as AddressInfo).port}/upload`;

  try {
    const admin = {
      Authorization: `Bearer ${signAdminToken(config.secrets.adminJwtSecret, 'bench', 600)}`,
      'Content-Type': 'application/json',
    };
    const tenant = (await (
      await fetch(`${url}/admin/tenants`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: 'Bench', slug: `bench-${Date.now()}`, rate_limit_rpm: 1_000_000 }),
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
    console.log(`file: ${archive.length} bytes; ${PER_LEVEL} uploads per level`);
    console.log('clients | baseline up/s | service up/s (each to valid) | ratio | upload->valid p50 ms | p99 ms');

    for (const concurrency of LEVELS) {
      const baseRate = await runClients(concurrency, PER_LEVEL, async () => {
        const res = await fetch(baselineUrl, { method: 'POST', body: form(archive) });
        await res.arrayBuffer();
      });
      const latencies: number[] = [];
      const serviceRate = await runClients(concurrency, PER_LEVEL, async () => {
        const t0 = performance.now();
        const res = await fetch(`${url}/upload`, { method: 'POST', headers: auth, body: form(archive) });
        const { id } = (await res.json()) as { id: string };
        if (res.status !== 201) throw new Error(`upload answered ${res.status}`);
        // Upload-to-valid: poll the record (S1) until the background job has settled it.
        for (;;) {
          const doc = (await (await fetch(`${url}/sdf/${id}`, { headers: auth })).json()) as { status: string };
          if (doc.status !== 'pending') break;
          await new Promise((r) => setTimeout(r, 5));
        }
        latencies.push(performance.now() - t0);
      });
      latencies.sort((a, b) => a - b);
      console.log(
        [
          String(concurrency).padStart(7),
          baseRate.toFixed(1).padStart(13),
          serviceRate.toFixed(1).padStart(12),
          (serviceRate / baseRate).toFixed(2).padStart(5),
          percentile(latencies, 50).toFixed(1).padStart(20),
          percentile(latencies, 99).toFixed(1).padStart(6),
        ].join(' | '),
      );
    }
  } finally {
    await app.close();
    await new Promise((r) => baseline.close(r));
    rmSync(storage, { recursive: true, force: true });
    rmSync(baselineDir, { recursive: true, force: true });
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
