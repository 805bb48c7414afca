/**
 * Signing jobs per second beside `signArchive()` of the same file in a loop, in the same run.
 *
 * The service figure: BENCH_SIGNS valid documents are asked to be signed (POST /sign/:id each, by 32
 * clients), and the clock runs until PostgreSQL shows every one `signed`. The service runs as one
 * process of its own (PROCESS_ROLE all), so the clients and the polling stay off its event loop. The
 * baseline: `signArchive()` with the same key type, BENCH_SIGNS times, one after the other, here: with
 * the key as PEM (as `sdf sign` signs a file), and with the key parsed once.
 *
 *   npm run bench:sign        (BENCH_SIGNS, default 200)
 *
 * Needs the local PostgreSQL and Redis; makes and drops its own database.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import type pg from 'pg';
import { DEFAULT_LIMITS, generateKeyPair, signArchive } from '../src/sdf/index.js';
import {
  benchArchive,
  benchSetup,
  benchTenant,
  cpuByGroup,
  cpuPer,
  run,
  startProcess,
  stopProcesses,
} from './harness.js';

const SIGNS = Number(process.env.BENCH_SIGNS ?? 200);
const CLIENTS = 32;

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
  const setup = await benchSetup();
  const { db } = setup;
  const service = await startProcess('all', { ...setup.env, DATABASE_RUN_MIGRATIONS: 'false' });
  const url = service.url!;
  try {
    const tenant = await benchTenant(url, setup.config, 'Sign');
    const auth = { 'X-API-Key': tenant.key };
    const archive = await benchArchive();

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

    // Baseline: the format core's signing of the same file, ECDSA-P256 as the tenant's key, as `sdf sign`
    // does it (the key given as PEM); and, beside it, with the key parsed once (as the service's signing
    // threads keep it).
    const pair = generateKeyPair('ECDSA-P256', 'bench');
    const loop = async (key: { privateKeyPem: string } | { privateKey: KeyObject }): Promise<number> => {
      const t0 = performance.now();
      for (let i = 0; i < SIGNS; i++) {
        await signArchive(archive, { ...key, algorithm: 'ECDSA-P256', keyId: 'bench', limits: DEFAULT_LIMITS });
      }
      return (SIGNS / (performance.now() - t0)) * 1000;
    };
    const baseRate = await loop({ privateKeyPem: pair.privateKeyPem });
    const parsedRate = await loop({ privateKey: createPrivateKey(pair.privateKeyPem) });

    const cpuBefore = cpuByGroup({ service: service.child.pid });
    const t1 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let i = next++; i < ids.length; i = next++) {
          const res = await fetch(`${url}/sign/${ids[i]}`, { method: 'POST', headers: auth });
          if (res.status !== 202) throw new Error(`sign answered ${res.status}`);
          await res.arrayBuffer();
        }
      }),
    );
    const accepted = performance.now() - t1;
    await waitFor(db, tenant.id, 'signed', SIGNS);
    const serviceRate = (SIGNS / (performance.now() - t1)) * 1000;
    const cpu = cpuPer(cpuBefore, cpuByGroup({ service: service.child.pid }), SIGNS);
    console.log(`file: ${archive.length} bytes; ${SIGNS} signatures (ECDSA-P256)`);
    console.log(`signArchive() in a loop: ${baseRate.toFixed(1)}/s (key parsed once: ${parsedRate.toFixed(1)}/s)`);
    console.log(`signing jobs (POST /sign/:id to signed): ${serviceRate.toFixed(1)}/s`);
    console.log(
      `ratio: ${(serviceRate / baseRate).toFixed(2)} (to the key parsed once: ${(serviceRate / parsedRate).toFixed(2)}; ` +
        `every 202 answered after ${accepted.toFixed(0)} ms)`,
    );
    console.log(`CPU per signature (ms): ${cpu.map(([g, ms]) => `${g} ${ms.toFixed(2)}`).join(', ')}`);
  } finally {
    await stopProcesses([service.child]);
    await setup.cleanup();
  }
}

run(main);
