/**
 * A soak: 120 s of mixed traffic from 64 connections (autocannon) against an `api` and a `worker`
 * process of the built service on the managed deployment: lists, metas, downloads, uploads, synchronous
 * validations, `/v1` logins and usage reads. Every 10 s it prints the window's throughput, p50/p99
 * latency, answers by status outside 2xx, the API's event-loop delay p99, V8 heap used and memory
 * outside the heap (its own /metrics), and the RSS of both processes (the mean of a reading each
 * second); at the end, whether any answer was a 5xx and how the RSS of the last minute compares with
 * the first.
 *
 *   npm run bench:soak          (BENCH_SOAK_SECONDS, default 120; BENCH_SOAK_CONNECTIONS, default 64;
 *                                BENCH_SOAK_WARMUP_SECONDS of the same traffic first, not counted, default 150)
 *
 * Needs the local PostgreSQL and Redis (DATABASE_URL / REDIS_URL); makes and drops its own database.
 */
import { readFileSync } from 'node:fs';
import autocannon, { type Request } from 'autocannon';
import { adminHeaders, benchArchive, benchSetup, percentile, run, startProcess, stopProcesses } from './harness.js';

const SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 120);
/**
 * The same traffic before the measured run, not counted, so that both processes are past their start-up:
 * the API's RSS climbs for its first half minute or so while V8 sizes its heap for the load, and the
 * worker's falls by about 30 MB some 100 s after its last full collection of start-up (V8's memory
 * reducer shrinks its young generation) and climbs back over the next half minute. Neither is growth
 * or shrinkage a leak check may count; after them both processes hold level (docs/benchmarks.md).
 */
const WARMUP_SECONDS = Number(process.env.BENCH_SOAK_WARMUP_SECONDS ?? 150);
const CONNECTIONS = Number(process.env.BENCH_SOAK_CONNECTIONS ?? 64);
const WINDOW_MS = 10_000;
const PASSWORD = 'a long unusual soak passphrase';
const METRICS_TOKEN = 'soak-metrics-token';

function multipart(file: Buffer): { body: Buffer; type: string } {
  const boundary = 'soak-boundary-7f3a';
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.sdf"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    ),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

function rssMb(pid: number | undefined): number {
  if (!pid) return NaN;
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? NaN) / 1024;
}

/** From the API's own /metrics: event-loop delay p99 (ms), V8 heap used and memory outside the heap (MB). */
async function apiFigures(url: string): Promise<{ loop: number; heap: number; external: number }> {
  const res = await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await res.text();
  const value = (name: string) =>
    Number(
      text
        .split('\n')
        .find((l) => l.startsWith(`${name} `))
        ?.split(' ')[1] ?? NaN,
    );
  return {
    loop: value('nodejs_eventloop_lag_p99_seconds') * 1000,
    heap: value('nodejs_heap_size_used_bytes') / 2 ** 20,
    external: value('nodejs_external_memory_bytes') / 2 ** 20,
  };
}

async function main(): Promise<void> {
  const setup = await benchSetup({
    DEPLOYMENT_MODE: 'managed',
    METRICS_TOKEN,
    // One client address drives everything: the per-address bounds are not what this measures.
    AUTH_ROUTE_LIMIT_PER_ADDRESS: '100000000',
    AUTH_FAILURE_LIMIT: '100000000',
  });
  const [api, worker] = await Promise.all([startProcess('api', setup.env), startProcess('worker', setup.env)]);
  const url = api.url!;
  try {
    const json = async (path: string, init: RequestInit) => {
      const res = await fetch(`${url}${path}`, init);
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, unknown>;
    };
    const email = `soak-${Date.now()}@example.test`;
    const registered = await json('/v1/auth/register', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD, organization: 'Soak GmbH', slug: `soak-${Date.now()}` }),
    });
    const orgId = String((registered.organization as { id: string }).id);
    await json(`/admin/tenants/${orgId}`, {
      method: 'PATCH',
      headers: adminHeaders(setup.config),
      body: JSON.stringify({
        plan: 'enterprise',
        limits: { rpm: 1_000_000, documents: null, api_calls: null, storage_bytes: null },
      }),
    });
    const key = String(
      (
        await json(`/admin/tenants/${orgId}/keys`, {
          method: 'POST',
          headers: adminHeaders(setup.config),
          body: JSON.stringify({ name: 'soak' }),
        })
      ).key,
    );
    const login = JSON.stringify({ email, password: PASSWORD });
    const access = String(
      (await json('/v1/auth/login', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: login }))
        .access_token,
    );

    // Documents to read: uploaded and validated before the clock starts.
    const file = multipart(await benchArchive(20 * 1024));
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) {
      const doc = await json('/upload', {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': file.type },
        body: file.body,
      });
      ids.push(String(doc.id));
    }
    for (const id of ids) {
      for (;;) {
        const doc = await json(`/sdf/${id}`, { headers: { 'X-API-Key': key } });
        if (doc.status !== 'pending') break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }

    const asKey = { 'X-API-Key': key };
    // Reads dominate, as on a real deployment; a quarter of the documents are uploaded and validated
    // again in each rotation, and one login per rotation (a password hash costs tens of milliseconds).
    const requests = ids.flatMap((id, i): Request[] => [
      { method: 'GET', path: '/list?limit=20', headers: asKey },
      { method: 'GET', path: `/meta/${id}`, headers: asKey },
      { method: 'GET', path: `/download/${id}`, headers: asKey },
      { method: 'GET', path: `/sdf/${ids[(i + 1) % ids.length]}`, headers: asKey },
      ...(i % 4 === 0
        ? [
            { method: 'POST', path: '/upload', headers: { ...asKey, 'Content-Type': file.type }, body: file.body },
            { method: 'POST', path: '/validate', headers: { ...asKey, 'Content-Type': file.type }, body: file.body },
          ]
        : []),
      ...(i % 8 === 0
        ? [{ method: 'GET', path: '/v1/billing/usage', headers: { Authorization: `Bearer ${access}` } }]
        : []),
      ...(i === 0
        ? [{ method: 'POST', path: '/v1/auth/login', headers: { 'Content-Type': 'application/json' }, body: login }]
        : []),
    ]);

    if (WARMUP_SECONDS > 0) {
      const warm = await autocannon({ url, connections: CONNECTIONS, duration: WARMUP_SECONDS, timeout: 30, requests });
      console.log(
        `warm-up: ${WARMUP_SECONDS} s, ${warm.requests.total} requests, not counted; api RSS then ` +
          `${rssMb(api.child.pid).toFixed(0)} MB, worker ${rssMb(worker.child.pid).toFixed(0)} MB`,
      );
    }
    let latencies: number[] = [];
    let statuses = new Map<number, number>();
    const total = new Map<number, number>();
    // RSS read every second: the API's follows its heap, which swings by a couple of hundred MB within
    // a window, so a window's figure is the mean of its readings, not one reading at its end.
    const rss: { api: number; worker: number }[] = [];
    let readings: { api: number; worker: number }[] = [];
    const reader = setInterval(
      () => readings.push({ api: rssMb(api.child.pid), worker: rssMb(worker.child.pid) }),
      1_000,
    );
    const instance = autocannon({ url, connections: CONNECTIONS, duration: SECONDS, timeout: 30, requests });
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      latencies.push(ms);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      total.set(status, (total.get(status) ?? 0) + 1);
    });
    console.log(`soak: ${CONNECTIONS} connections, ${SECONDS} s, ${requests.length} requests in rotation`);
    console.log(
      '   t  req/s   p50 ms   p99 ms  not 2xx            loop p99 ms  api RSS MB  worker RSS MB  api heap MB  api external MB',
    );
    let t = 0;
    let printed: Promise<void> = Promise.resolve();
    const ticker = setInterval(() => {
      t += WINDOW_MS / 1000;
      const window = latencies.sort((a, b) => a - b);
      const other = [...statuses].filter(([s]) => s < 200 || s >= 300).map(([s, n]) => `${s}:${n}`);
      readings.push({ api: rssMb(api.child.pid), worker: rssMb(worker.child.pid) });
      const sample = {
        api: readings.reduce((a, r) => a + r.api, 0) / readings.length,
        worker: readings.reduce((a, r) => a + r.worker, 0) / readings.length,
      };
      readings = [];
      rss.push(sample);
      latencies = [];
      statuses = new Map();
      printed = apiFigures(url).then(
        ({ loop, heap, external }) => {
          console.log(
            `${String(t).padStart(4)} ${String(Math.round(window.length / (WINDOW_MS / 1000))).padStart(6)} ` +
              `${percentile(window, 50).toFixed(1).padStart(8)} ${percentile(window, 99).toFixed(1).padStart(8)}  ` +
              `${(other.join(' ') || '-').padEnd(18)} ${loop.toFixed(1).padStart(11)} ${sample.api.toFixed(0).padStart(11)} ` +
              `${sample.worker.toFixed(0).padStart(14)} ${heap.toFixed(0).padStart(12)} ${external.toFixed(0).padStart(16)}`,
          );
        },
        () => undefined,
      );
    }, WINDOW_MS);
    const result = await instance;
    clearInterval(ticker);
    clearInterval(reader);
    await printed;

    const perWindow = 60_000 / WINDOW_MS;
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const first = rss.slice(0, perWindow);
    const last = rss.slice(-perWindow);
    const drift = (k: 'api' | 'worker') => (mean(last.map((s) => s[k])) / mean(first.map((s) => s[k])) - 1) * 100;
    const fivexx = [...total].filter(([s]) => s >= 500).reduce((a, [, n]) => a + n, 0);
    console.log(
      `\nrequests ${result.requests.total}, ${result.requests.average} req/s on average; errors ${result.errors}, timeouts ${result.timeouts}`,
    );
    console.log(
      `answers by status: ${[...total]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}: ${n}`)
        .join(', ')}`,
    );
    console.log(`5xx: ${fivexx} (${fivexx === 0 ? 'none' : 'FAIL'})`);
    for (const k of ['api', 'worker'] as const)
      console.log(
        `${k} RSS: first minute ${mean(first.map((s) => s[k])).toFixed(0)} MB, last minute ${mean(last.map((s) => s[k])).toFixed(0)} MB, ` +
          `${drift(k) >= 0 ? '+' : ''}${drift(k).toFixed(1)}% (${Math.abs(drift(k)) <= 10 ? 'within 10%' : 'FAIL'})`,
      );
    if (fivexx > 0 || Math.abs(drift('api')) > 10 || Math.abs(drift('worker')) > 10) process.exitCode = 1;
  } finally {
    await stopProcesses([api.child, worker.child]);
    await setup.cleanup();
  }
}

run(main);
