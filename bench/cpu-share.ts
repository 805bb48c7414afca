/**
 * Where the machine's CPU goes per upload under load: BENCH_UPLOADS uploads (default 2000) by
 * BENCH_CLIENTS clients (default 32) against an `api` and a `worker` process of the built service,
 * until every document is settled; then the CPU time (user + system) of every process on the machine,
 * grouped (the clients in this process, api, worker, PostgreSQL, Redis, the validation pool and the
 * rest), per upload and as a share of one core, beside the machine's own user/system/idle split over the
 * same time, and the write system calls per upload by process (each write to a loopback socket wakes its
 * reader). Then the same count of authenticated `GET /sdf/:id` requests by the same clients, CPU per
 * request: the floor of any authenticated request (HTTP, authentication, the rate limit, one statement,
 * the JSON answer) to set the upload's figure beside.
 *
 *   npm run bench:cpu-share
 *
 * Needs the local PostgreSQL and Redis; makes and drops its own database.
 */
import {
  benchArchive,
  benchSetup,
  benchTenant,
  cpuByGroup,
  MACHINE_TIMES,
  machineTimes,
  perItem,
  run,
  startProcess,
  stopProcesses,
  writesByGroup,
} from './harness.js';

const TOTAL = Number(process.env.BENCH_UPLOADS ?? 2000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
/**
 * CPU time per unit of work by process group, then in all; beside each, the share of one core it kept
 * busy at `perSecond` units a second (a process near 100 % may be the ceiling: its event loop is one thread).
 */
function printShare(unit: string, share: [string, number][], perSecond: number): void {
  console.log(`CPU per ${unit} (ms), by process, and % of one core:`);
  const line = (ms: number, label: string) =>
    console.log(`  ${ms.toFixed(2).padStart(6)}  ${((ms * perSecond) / 10).toFixed(0).padStart(4)} %  ${label}`);
  for (const [group, ms] of share) {
    // The validation pool's processes are the worker's children, started as `node` (grouped as other).
    line(ms, group === 'other' ? 'other (validation pool, kernel, ...)' : group);
  }
  line(
    share.reduce((sum, [, ms]) => sum + ms, 0),
    'all',
  );
}

function printWrites(unit: string, writes: [string, number][]): void {
  console.log(`write calls per ${unit}: ${writes.map(([group, n]) => `${group} ${n.toFixed(1)}`).join(', ')}`);
}

async function main(): Promise<void> {
  const setup = await benchSetup();
  const env = { ...setup.env, DATABASE_RUN_MIGRATIONS: 'false' };
  const api = await startProcess('api', env);
  const worker = await startProcess('worker', env);
  try {
    const { key } = await benchTenant(api.url!, setup.config, 'Cpu');
    const archive = await benchArchive();
    let lastId = '';
    const upload = async () => {
      const body = new FormData();
      body.append('file', new Blob([archive]), 'bench.sdf');
      const res = await fetch(`${api.url}/upload`, { method: 'POST', headers: { 'X-API-Key': key }, body });
      lastId = ((await res.json()) as { id: string }).id;
      if (res.status !== 201) throw new Error(`upload answered ${res.status}`);
    };
    const read = async () => {
      const res = await fetch(`${api.url}/sdf/${lastId}`, { headers: { 'X-API-Key': key } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`GET /sdf/:id answered ${res.status}`);
    };
    const settled = async () => {
      for (;;) {
        const { rows } = await setup.db.query<{ n: string }>(
          `SELECT count(*) AS n FROM documents WHERE status = 'pending'`,
        );
        if (rows[0]!.n === '0') return;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    for (let i = 0; i < 100; i++) await upload(); // warm-up
    await settled();

    const own = { api: api.child.pid, worker: worker.child.pid };
    const byClients = (call: () => Promise<void>) => {
      let next = 0;
      return Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (next++ < TOTAL) await call();
        }),
      );
    };
    const cpu0 = cpuByGroup(own);
    const writes0 = writesByGroup(own);
    const m0 = machineTimes();
    const t0 = performance.now();
    await byClients(upload);
    const uploaded = performance.now() - t0;
    await settled();
    const all = performance.now() - t0;
    const m1 = machineTimes();
    const perUpload = perItem(cpu0, cpuByGroup(own), TOTAL);
    const writesPerUpload = perItem(writes0, writesByGroup(own), TOTAL);

    console.log(
      `${TOTAL} uploads by ${CLIENTS} clients: ${((TOTAL / uploaded) * 1000).toFixed(0)}/s answered, ` +
        `${((TOTAL / all) * 1000).toFixed(0)}/s settled`,
    );
    printShare('upload', perUpload, (TOTAL / all) * 1000);
    console.log(
      'machine per upload (ms): ' +
        MACHINE_TIMES.map((name, i) => `${name} ${((m1[i]! - m0[i]!) / TOTAL).toFixed(2)}`).join(', '),
    );
    printWrites('upload', writesPerUpload);

    const cpu1 = cpuByGroup(own);
    const writes1 = writesByGroup(own);
    const t1 = performance.now();
    await byClients(read);
    const reads = performance.now() - t1;
    const perRead = perItem(cpu1, cpuByGroup(own), TOTAL);
    const writesPerRead = perItem(writes1, writesByGroup(own), TOTAL);
    console.log(`\n${TOTAL} GET /sdf/:id by ${CLIENTS} clients: ${((TOTAL / reads) * 1000).toFixed(0)}/s`);
    printShare('request', perRead, (TOTAL / reads) * 1000);
    printWrites('request', writesPerRead);
  } finally {
    await stopProcesses([api.child, worker.child]);
    await setup.cleanup();
  }
}

run(main);
