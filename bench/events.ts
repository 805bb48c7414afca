/**
 * bench:events — the event stream under load: 1,000 concurrent streams on one API process (a worker
 * process beside it validates), memory per open stream, and the latency of `document.validated` events
 * from the worker's commit to the client while uploads arrive at BENCH_RATE per second; beside it, in the
 * same run, the same load with a single stream (the baseline).
 *
 * Latency is the client's read time minus the event's `timestamp`, which the worker writes in the same
 * transaction just before it commits: an upper bound of commit-to-client by that transaction's last
 * statement and commit (well under a millisecond here). One machine, one clock.
 *
 * The baseline for the fan-out itself, in the same run: a bare Node HTTP server (bench/bare-sse.ts) writing
 * frames of the same size to as many streams at the same rate, with nothing else to do. Beside each, the
 * CPU its process spent (the API process's for the service).
 *
 * BENCH_STREAMS (1000), BENCH_RATE uploads/s (100), BENCH_SECONDS per phase (20).
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  benchArchive,
  benchSetup,
  benchTenant,
  percentile,
  run,
  startProcess,
  stopProcesses,
  type BenchSetup,
} from './harness.js';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000);
const RATE = Number(process.env.BENCH_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const TIMESTAMP = /"timestamp":"([^"]+)"/g;

/** Each event's `timestamp` parsed once for every stream that carries it. */
const sentAt = new Map<string, number>();

/**
 * One stream kept by this process: counts events and records latencies, parsing no more than needed. It
 * reads the raw connection (the request written by hand, the body searched as Latin-1 text, the chunked
 * framing left in it), since 1,000 streams through Node's HTTP client would take most of a core of the
 * machine the service is measured on; what it measures is the same: when each event's bytes arrived.
 */
class BenchStream {
  events = 0;
  /** Characters received after the response's head (frames, heartbeats, chunk framing). */
  chars = 0;
  private rest = '';
  private socket: net.Socket | undefined;

  constructor(private readonly latencies: number[] | null) {}

  open(url: string, key: string): Promise<void> {
    const target = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(target.port), target.hostname);
      this.socket = socket;
      socket.setEncoding('latin1');
      socket.on('error', reject);
      socket.on('connect', () =>
        socket.write(
          `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\n` +
            `X-API-Key: ${key}\r\nAccept: text/event-stream\r\n\r\n`,
        ),
      );
      let head: string | null = '';
      socket.on('data', (chunk: string) => {
        if (head === null) {
          this.take(chunk);
          return;
        }
        head += chunk;
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        const status = head.slice(9, 12);
        const body = head.slice(end + 4);
        head = null;
        if (status !== '200') {
          reject(new Error(`stream answered ${status}`));
          socket.destroy();
          return;
        }
        resolve();
        if (body) this.take(body);
      });
    });
  }

  private take(chunk: string): void {
    const now = Date.now();
    this.chars += chunk.length;
    const text = this.rest + chunk;
    const end = text.lastIndexOf('\n\n');
    if (end < 0) {
      this.rest = text;
      return;
    }
    this.rest = text.slice(end + 2);
    for (const m of text.slice(0, end).matchAll(TIMESTAMP)) {
      this.events++;
      if (!this.latencies) continue;
      let at = sentAt.get(m[1]!);
      if (at === undefined) sentAt.set(m[1]!, (at = Date.parse(m[1]!)));
      this.latencies.push(now - at);
    }
  }

  close(): void {
    this.socket?.destroy();
  }
}

/** Opens `STREAMS` streams on `url`, fifty at a time, all recording into `latencies`. */
async function openStreams(url: string, key: string, latencies: number[]): Promise<BenchStream[]> {
  const streams: BenchStream[] = [];
  for (let i = 0; i < STREAMS; i += 50) {
    const batch = Array.from({ length: Math.min(50, STREAMS - i) }, () => new BenchStream(latencies));
    await Promise.all(batch.map((s) => s.open(url, key)));
    streams.push(...batch);
  }
  return streams;
}

/** The median of five readings a quarter second apart (the resident set moves with every collection). */
async function steadyRss(pid: number): Promise<number> {
  const readings: number[] = [];
  for (let i = 0; i < 5; i++) {
    readings.push(rssOf(pid));
    await sleep(250);
  }
  return readings.sort((a, b) => a - b)[2]!;
}

/** CPU time (user and system) a process has spent, in ms. */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.match(/\d+/)?.[0] ?? 0) * 1024;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Uploads at `rate` per second for `seconds` (open loop: a slow answer does not slow the schedule). */
async function uploadAt(url: string, key: string, archive: Buffer, rate: number, seconds: number) {
  const began = Date.now();
  const total = Math.round(rate * seconds);
  let ok = 0;
  let failed = 0;
  const statuses = new Map<string, number>();
  const count = (what: string) => statuses.set(what, (statuses.get(what) ?? 0) + 1);
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = began + (i * 1000) / rate;
    if (due > Date.now()) await sleep(due - Date.now());
    const form = new FormData();
    form.append('file', new Blob([archive]), 'bench.sdf');
    inFlight.push(
      fetch(`${url}/upload`, { method: 'POST', headers: { 'X-API-Key': key }, body: form }).then(
        async (res) => {
          await res.arrayBuffer();
          if (res.status === 201) ok++;
          else {
            failed++;
            count(String(res.status));
          }
        },
        (err: unknown) => {
          failed++;
          count((err as Error).message);
        },
      ),
    );
  }
  await Promise.all(inFlight);
  const failures = [...statuses].map(([k, n]) => `${k}: ${n}`).join(', ');
  return { ok, failed, failures, rate: total / ((Date.now() - began) / 1000) };
}

async function phase(
  label: string,
  api: string,
  key: string,
  archive: Buffer,
  measured: BenchStream[],
  latencies: number[],
  setup: BenchSetup,
  tenantId: string,
  apiPid: number,
) {
  const before = measured.map((s) => s.events);
  const cpuBefore = cpuMsOf(apiPid);
  const sendBegan = Date.now();
  const uploads = await uploadAt(api, key, archive, RATE, SECONDS);
  const apiBusy = (cpuMsOf(apiPid) - cpuBefore) / (Date.now() - sendBegan);
  // Every upload's validation ends, and its event reaches the streams.
  const deadline = Date.now() + 120_000;
  for (;;) {
    const pending = await setup.db.query(
      `SELECT 1 FROM documents WHERE tenant_id = $1 AND status = 'pending' LIMIT 1`,
      [tenantId],
    );
    if (pending.rowCount === 0 || Date.now() > deadline) break;
    await sleep(200);
  }
  await sleep(2000);
  const got = measured.map((s, i) => s.events - before[i]!);
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    label,
    streams: measured.length,
    uploads,
    eventsPerStream: { min: Math.min(...got), max: Math.max(...got) },
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? NaN,
    samples: sorted.length,
    busy: apiBusy,
  };
}

/** What each phase reports: latency percentiles and the serving process's cores busy. */
interface Figures {
  p50: number;
  p99: number;
  max: number;
  samples: number;
  busy: number;
}

/** The baseline: a bare Node server writing frames of `size` bytes to STREAMS streams at RATE a second. */
async function bareFanOut(size: number) {
  const child = fork(join(dirname(fileURLToPath(import.meta.url)), 'bare-sse.js'), [], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  try {
    const [{ port }] = (await once(child, 'message')) as [{ port: number }];
    const latencies: number[] = [];
    const streams = await openStreams(`http://127.0.0.1:${port}/`, '', latencies);
    await sleep(1000);
    child.send({ rate: RATE, seconds: SECONDS, size });
    const [done] = (await once(child, 'message')) as [{ cpuMs: number; wallMs: number; sent: number }];
    await sleep(2000);
    for (const s of streams) s.close();
    const got = streams.map((s) => s.events);
    const sorted = latencies.sort((a, b) => a - b);
    return {
      label: 'bare server',
      streams: STREAMS,
      sentPerSecond: (done.sent * 1000) / done.wallMs,
      eventsPerStream: { min: Math.min(...got), max: Math.max(...got) },
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      max: sorted.at(-1) ?? NaN,
      samples: sorted.length,
      busy: done.cpuMs / done.wallMs,
    };
  } finally {
    child.kill();
  }
}

async function main(): Promise<void> {
  const setup = await benchSetup({
    EVENTS_MAX_PER_TENANT: String(STREAMS + 10),
    EVENTS_MAX_PER_PROCESS: String(STREAMS + 10),
    UPLOADS_IN_FLIGHT_PER_TENANT: '1000',
  });
  const children = [];
  try {
    const api = await startProcess('api', setup.env);
    const worker = await startProcess('worker', setup.env);
    children.push(api.child, worker.child);
    const url = api.url!;
    const tenant = await benchTenant(url, setup.config, 'Events');
    const archive = await benchArchive(10 * 1024);
    const query = `${url}/events?types=document.validated`;

    // Memory first, before any upload has made garbage: the API process's resident set, then the streams.
    await sleep(3000);
    const rssBefore = await steadyRss(api.child.pid!);
    const loadLatencies: number[] = [];
    let streams = await openStreams(query, tenant.key, loadLatencies);
    await sleep(3000);
    const rssAfter = await steadyRss(api.child.pid!);
    const perStream = (rssAfter - rssBefore) / STREAMS;
    for (const s of streams) s.close();
    await sleep(2000);

    // Baseline: the same upload rate with one stream.
    const baselineLatencies: number[] = [];
    const one = new BenchStream(baselineLatencies);
    await one.open(query, tenant.key);
    await sleep(1000);
    const apiPid = api.child.pid!;
    const baseline = await phase(
      '1 stream',
      url,
      tenant.key,
      archive,
      [one],
      baselineLatencies,
      setup,
      tenant.id,
      apiPid,
    );
    one.close();
    await sleep(1000);

    // The load: the same upload rate with every stream open again.
    loadLatencies.length = 0;
    streams = await openStreams(query, tenant.key, loadLatencies);
    await sleep(2000);
    const load = await phase(
      `${STREAMS} streams`,
      url,
      tenant.key,
      archive,
      streams,
      loadLatencies,
      setup,
      tenant.id,
      apiPid,
    );
    const rssLoaded = rssOf(api.child.pid!);
    for (const s of streams) s.close();
    // The frames the streams received, on average (the heartbeats are a few bytes a few times a minute).
    const frameSize = Math.round(
      streams.reduce((sum, s) => sum + s.chars, 0) /
        Math.max(
          1,
          streams.reduce((sum, s) => sum + s.events, 0),
        ),
    );
    await sleep(1000);
    const bare = await bareFanOut(frameSize);

    const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
    console.log(`bench:events — ${STREAMS} streams on one API process, ${RATE} uploads/s for ${SECONDS} s per phase`);
    console.log(
      `API process RSS: ${mb(rssBefore)} MB before the streams, ${mb(rssAfter)} MB with ${STREAMS} open and idle ` +
        `(${(perStream / 1024).toFixed(1)} KB per stream), ${mb(rssLoaded)} MB after the load phase`,
    );
    console.log(
      'phase        | streams | uploads/s sent | ok / failed | events per stream | p50 ms | p99 ms | max ms | samples | cores busy',
    );
    const row = (
      r: { label: string; streams: number; eventsPerStream: { min: number; max: number } } & Figures,
      sent: string,
      okFailed: string,
    ) =>
      [
        r.label.padEnd(12),
        String(r.streams).padStart(7),
        sent.padStart(14),
        okFailed.padStart(11),
        `${r.eventsPerStream.min}..${r.eventsPerStream.max}`.padStart(17),
        r.p50.toFixed(0).padStart(6),
        r.p99.toFixed(0).padStart(6),
        r.max.toFixed(0).padStart(6),
        String(r.samples).padStart(7),
        r.busy.toFixed(2).padStart(10),
      ].join(' | ');
    for (const r of [baseline, load])
      console.log(row(r, r.uploads.rate.toFixed(1), `${r.uploads.ok} / ${r.uploads.failed}`));
    console.log(row(bare, `${bare.sentPerSecond.toFixed(1)} ev/s`, '-'));
    console.log(
      `(cores busy: the API process's CPU time over the phase, or the bare server's; bare server: a frame of ` +
        `${frameSize} bytes, the size the streams received, to ${STREAMS} streams at ${RATE} a second, nothing else)`,
    );
    for (const r of [baseline, load])
      if (r.uploads.failures) console.log(`${r.label}: failed uploads ${r.uploads.failures}`);
    console.log(`goal p99 <= 250 ms with ${STREAMS} streams: ${load.p99 <= 250 ? 'met' : 'NOT met'}`);
  } finally {
    await stopProcesses(children);
    await setup.cleanup();
  }
}

run(main);
