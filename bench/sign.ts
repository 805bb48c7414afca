/**
 * Signing jobs per second beside `signArchive()` of the same file in a loop, in the same run.
 *
 * The service figure: BENCH_SIGNS valid documents are asked to be signed (POST /sign/:id each, by 32
 * clients), and the clock runs until PostgreSQL shows every one `signed`. The service runs in processes
 * of its own, so the clients and the polling are not on its event loop: first one process doing API
 * and jobs (PROCESS_ROLE all), then an `api` and a `worker` process side by side. The baseline, measured
 * right before and right after each (after a warm-up; the mean of the two): `signArchive()` with the same
 * key type, BENCH_SIGNS times, one after the other, here: with the key as PEM (as `sdf sign` signs a
 * file), and with the key parsed once. Beside the rates: CPU time and write system calls per signature by
 * process, and the share of the machine left idle while the service signed.
 *
 *   npm run bench:sign        (BENCH_SIGNS, default 200)
 *
 * Needs the local PostgreSQL and Redis; makes and drops its own database.
 */
import type { ChildProcess } from 'node:child_process';
import { createPrivateKey, type KeyObject } from 'node:crypto';
import type pg from 'pg';
import { DEFAULT_LIMITS, generateKeyPair, signArchive } from '../src/sdf/index.js';
import {
  benchArchive,
  benchSetup,
  benchTenant,
  cpuByGroup,
  MACHINE_TIMES,
  machineTimes,
  perItem,
  writesByGroup,
  run,
  startProcess,
  stopProcesses,
  type BenchSetup,
} from './harness.js';

const SIGNS = Number(process.env.BENCH_SIGNS ?? 200);
const CLIENTS = 32;

/**
 * Until `count` documents of the tenant have `status`. Every 20 ms: the end of a run of a few seconds is
 * found within 1%, and the counting takes next to nothing from the service being measured.
 */
async function waitFor(db: pg.Client, tenantId: string, status: string, count: number): Promise<void> {
  for (;;) {
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM documents WHERE tenant_id = $1 AND status = $2`,
      [tenantId, status],
    );
    if (Number(rows[0]!.n) >= count) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** signArchive() of `archive` SIGNS times in a row, after a warm-up: signatures/s, key as PEM and parsed once. */
async function baseline(archive: Buffer): Promise<{ pem: number; parsed: number }> {
  const pair = generateKeyPair('ECDSA-P256', 'bench');
  const loop = async (key: { privateKeyPem: string } | { privateKey: KeyObject }, n: number): Promise<number> => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      await signArchive(archive, { ...key, algorithm: 'ECDSA-P256', keyId: 'bench', limits: DEFAULT_LIMITS });
    }
    return (n / (performance.now() - t0)) * 1000;
  };
  const privateKey = createPrivateKey(pair.privateKeyPem);
  await loop({ privateKeyPem: pair.privateKeyPem }, 100);
  await loop({ privateKey }, 100);
  return { pem: await loop({ privateKeyPem: pair.privateKeyPem }, SIGNS), parsed: await loop({ privateKey }, SIGNS) };
}

async function measure(label: string, setup: BenchSetup, roles: ('all' | 'api' | 'worker')[]): Promise<void> {
  const { db } = setup;
  const env = { ...setup.env, DATABASE_RUN_MIGRATIONS: 'false' };
  const started: { child: ChildProcess; url?: string }[] = [];
  for (const role of roles) started.push(await startProcess(role, env));
  const children = started.map((s) => s.child);
  const url = started.find((s) => s.url)!.url!;
  try {
    const tenant = await benchTenant(url, setup.config, roles.length === 1 ? 'Sign' : 'SignSplit');
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

    const before = await baseline(archive);

    const pids = Object.fromEntries(roles.map((role, i) => [role === 'all' ? 'service' : role, children[i]!.pid]));
    const cpuBefore = cpuByGroup(pids);
    const writesBefore = writesByGroup(pids);
    const machineBefore = machineTimes();
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
    const cpu = perItem(cpuBefore, cpuByGroup(pids), SIGNS);
    const writes = perItem(writesBefore, writesByGroup(pids), SIGNS);
    const machine = machineTimes().map((ms, i) => ms - machineBefore[i]!);
    const idle = machine[MACHINE_TIMES.indexOf('idle')]! / machine.reduce((a, b) => a + b, 0);
    // The machine's speed drifts: the baseline is the mean of a measurement right before and right after.
    const after = await baseline(archive);
    const base = { pem: (before.pem + after.pem) / 2, parsed: (before.parsed + after.parsed) / 2 };
    console.log(`\n${label}`);
    console.log(
      `signArchive() in a loop: ${base.pem.toFixed(1)}/s (before ${before.pem.toFixed(1)}, after ${after.pem.toFixed(1)}); ` +
        `key parsed once: ${base.parsed.toFixed(1)}/s`,
    );
    console.log(`signing jobs (POST /sign/:id to signed): ${serviceRate.toFixed(1)}/s`);
    console.log(
      `ratio: ${(serviceRate / base.pem).toFixed(2)} (to the key parsed once: ${(serviceRate / base.parsed).toFixed(2)}; ` +
        `every 202 answered after ${accepted.toFixed(0)} ms)`,
    );
    console.log(`CPU per signature (ms): ${cpu.map(([g, ms]) => `${g} ${ms.toFixed(2)}`).join(', ')}`);
    console.log(`write calls per signature: ${writes.map(([g, n]) => `${g} ${n.toFixed(1)}`).join(', ')}`);
    console.log(`machine idle meanwhile: ${(idle * 100).toFixed(0)} %`);
  } finally {
    await stopProcesses(children);
  }
}

async function main(): Promise<void> {
  const setup = await benchSetup();
  try {
    console.log(`file: ~100 KB; ${SIGNS} signatures (ECDSA-P256) per layout, ${CLIENTS} clients`);
    await measure('one process (PROCESS_ROLE all)', setup, ['all']);
    await measure('api and worker processes', setup, ['api', 'worker']);
  } finally {
    await setup.cleanup();
  }
}

run(main);
