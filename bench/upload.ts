/**
 * The upload path beside a bare baseline (a plain Node HTTP server that only streams the body to disk),
 * in the same run, at 1, 8, 32 and 64 concurrent clients, in two figures:
 *
 * - upload alone: uploads/s to the 201 and the p50/p99 of that answer;
 * - upload to valid: each client uploads, then waits until its document has left `pending`; uploads/s,
 *   the p50/p99 of upload-to-valid, and the share of the machine's CPU left idle meanwhile: while every
 *   client has a call in flight (from the first answer to the start of the last call), and over the whole
 *   phase with its start and the drain of its last calls. One poller reads the statuses of every waiting
 *   document from PostgreSQL every 5 ms, so waiting adds no HTTP load to the service being measured.
 *
 * Each level runs in rounds (BENCH_ROUNDS, default 3), each round the bare server, upload alone and upload
 * to valid in turn. A rate is the median round's; a ratio is the median over the rounds of the rate to the
 * bare server's in the same round, so a slow or quick spell of the machine does not fall on one side
 * only; latency percentiles are over every round's calls; the idle shares are over every round's spans.
 *
 * Both figures are measured twice, each with the built service (dist/src/main.js) in processes of its
 * own, as it is deployed: one process doing API and jobs (PROCESS_ROLE all), then an `api` and a
 * `worker` process side by side. The clients, the bare server and the poller share this process.
 *
 *   npm run bench:upload        (BENCH_UPLOADS calls per round and figure, default 160;
 *                                BENCH_ROUNDS, default 3; BENCH_LEVELS, default 1,8,32,64)
 *
 * At the end it draws its printed tables as plots of uploads/s against clients into docs/plots
 * (BENCH_PLOT_DIR elsewhere), which docs/benchmarks.md shows.
 *
 * Needs the local PostgreSQL and Redis (DATABASE_URL / REDIS_URL); makes and drops its own database.
 */
import type { ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import type { AppConfig } from '../src/config/app-config.js';
import {
  benchArchive,
  benchSetup,
  benchTenant,
  MACHINE_TIMES,
  machineTimes,
  median,
  percentile,
  run,
  startProcess,
  stopProcesses,
} from './harness.js';
import { parseUploadOutput, uploadPlots, writePlots } from './plot.js';

/** BENCH_LEVELS=32 (comma-separated) measures those client counts alone. */
const LEVELS = (process.env.BENCH_LEVELS ?? '1,8,32,64').split(',').map(Number);
const PER_LEVEL = Number(process.env.BENCH_UPLOADS ?? 160);
/** Rounds per level: each measures the bare server, upload alone and upload to valid, in that order. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const FILE_BYTES = 100 * 1024;

/** One round of a figure: its calls per second and the latency of each call (ms). */
interface Round {
  rate: number;
  latencies: number[];
}

/** A figure over its rounds: the median round's rate, and percentiles over every round's calls. */
interface Figure {
  rate: number;
  p50: number;
  p99: number;
}

function figure(rounds: Round[]): Figure {
  const latencies = rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
  return {
    rate: median(rounds.map((r) => r.rate)),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

/** The median over the rounds of the figure's rate to the bare server's in the same round. */
function ratio(rounds: Round[], baseline: Round[]): number {
  return median(rounds.map((r, i) => r.rate / baseline[i]!.rate));
}

/**
 * When every client has a call in flight: from the first call's answer (connections are open and the
 * service has seen the work) to the start of the last call (from then on fewer clients remain busy as
 * the last calls end).
 */
interface Saturation {
  onStart(): void;
  onEnd(): void;
}

/** `total` calls of `one` by `concurrency` clients; calls/s and the latency of each call. */
async function runClients(
  concurrency: number,
  total: number,
  one: () => Promise<void>,
  saturation?: Saturation,
): Promise<Round> {
  let next = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) {
        if (next === total) saturation?.onEnd();
        const t0 = performance.now();
        await one();
        latencies.push(performance.now() - t0);
        if (latencies.length === 1) saturation?.onStart();
      }
    }),
  );
  return { rate: (total / (performance.now() - started)) * 1000, latencies };
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

/** Resolves each waiting document once PostgreSQL shows it settled; one query per tick for all of them. */
class StatusPoller {
  private readonly waiting = new Map<string, () => void>();
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(private readonly db: pg.Client) {}

  settled(id: string): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.timer ??= setInterval(() => void this.tick(), 5);
    });
  }

  private async tick(): Promise<void> {
    if (this.busy || this.waiting.size === 0) return;
    this.busy = true;
    try {
      const { rows } = await this.db.query<{ id: string }>(
        `SELECT id FROM documents WHERE id = ANY($1::uuid[]) AND status <> 'pending'`,
        [[...this.waiting.keys()]],
      );
      for (const { id } of rows) {
        this.waiting.get(id)?.();
        this.waiting.delete(id);
      }
    } finally {
      this.busy = false;
    }
  }

  /** Waits until no document of the tenant is pending (the previous phase's jobs are done). */
  async drain(): Promise<void> {
    for (;;) {
      const { rows } = await this.db.query<{ n: string }>(
        `SELECT count(*) AS n FROM documents WHERE status = 'pending'`,
      );
      if (rows[0]!.n === '0') return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** Peak resident memory of a process, in MB (VmHWM), read before it ends. */
function peakRssMb(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function makeTenant(url: string, config: AppConfig): Promise<Record<string, string>> {
  return { 'X-API-Key': (await benchTenant(url, config, 'Bench')).key };
}

/**
 * The machine's CPU time left idle (idle + iowait) between readings of machineTimes(), added up over the
 * spans given: what the service, the clients and everything else on the machine did not use while upload
 * to valid ran. `share()` is idle over all.
 */
class IdleTime {
  private idle = 0;
  private total = 0;

  add(before: number[], after: number[]): void {
    const delta = after.map((t, i) => t - before[i]!);
    this.total += delta.reduce((a, b) => a + b, 0);
    this.idle += delta[MACHINE_TIMES.indexOf('idle')]! + delta[MACHINE_TIMES.indexOf('iowait')]!;
  }

  share(): number | undefined {
    return this.total > 0 ? this.idle / this.total : undefined;
  }
}

const fmt = (n: number, width: number, digits = 1) => n.toFixed(digits).padStart(width);

/** What the run prints, kept to draw the plots from at the end. */
const printed: string[] = [];
function print(line: string): void {
  printed.push(line);
  console.log(line);
}

async function measure(
  label: string,
  url: string,
  auth: Record<string, string>,
  archive: Buffer,
  baselineUrl: string,
  poller: StatusPoller,
): Promise<void> {
  print(`\n${label}`);
  print(
    'clients | baseline up/s | upload up/s  ratio  p50 ms  p99 ms | to-valid up/s  ratio  p50 ms  p99 ms  p99/p50 | idle %  phase idle %',
  );
  const upload = async () => {
    const res = await fetch(`${url}/upload`, { method: 'POST', headers: auth, body: form(archive) });
    const body = (await res.json()) as { id: string };
    if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${JSON.stringify(body)}`);
    return body.id;
  };
  for (const clients of LEVELS) {
    // The figures in turns, round after round: a slow or quick spell of the machine falls on the bare
    // server and the service alike, and each ratio is taken within its round.
    const base: Round[] = [];
    const alone: Round[] = [];
    const toValid: Round[] = [];
    const saturated = new IdleTime();
    const phase = new IdleTime();
    for (let round = 0; round < ROUNDS; round++) {
      base.push(
        await runClients(clients, PER_LEVEL, async () => {
          await (await fetch(baselineUrl, { method: 'POST', body: form(archive) })).arrayBuffer();
        }),
      );
      await poller.drain();
      alone.push(await runClients(clients, PER_LEVEL, async () => void (await upload())));
      await poller.drain();
      const before = machineTimes();
      const span: { start?: number[]; end?: number[] } = {};
      toValid.push(
        await runClients(clients, PER_LEVEL, async () => poller.settled(await upload()), {
          onStart: () => (span.start = machineTimes()),
          // With no more calls than clients there is no span in which all are busy.
          onEnd: () => void (span.start && (span.end = machineTimes())),
        }),
      );
      phase.add(before, machineTimes());
      // While every client is busy; the whole phase also holds its start and the drain of its last calls.
      if (span.start && span.end) saturated.add(span.start, span.end);
    }
    const [b, a, v] = [figure(base), figure(alone), figure(toValid)];
    const busyIdle = saturated.share();
    print(
      [
        String(clients).padStart(7),
        fmt(b.rate, 13),
        `${fmt(a.rate, 11)} ${fmt(ratio(alone, base), 6, 2)} ${fmt(a.p50, 7)} ${fmt(a.p99, 7)}`,
        `${fmt(v.rate, 13)} ${fmt(ratio(toValid, base), 6, 2)} ${fmt(v.p50, 7)} ${fmt(v.p99, 7)} ${fmt(v.p99 / v.p50, 8, 2)}`,
        `${busyIdle === undefined ? '     -' : fmt(busyIdle * 100, 6)} ${fmt((phase.share() ?? 0) * 100, 11)}`,
      ].join(' | '),
    );
  }
}

async function main(): Promise<void> {
  const setup = await benchSetup();
  const { env, config, db } = setup;
  const baselineDir = mkdtempSync(join(tmpdir(), 'sdf-bench-baseline-'));
  const poller = new StatusPoller(db);
  const baseline = await baselineServer(baselineDir);
  const baselineUrl = `http://127.0.0.1:${(baseline.address() as AddressInfo).port}/upload`;
  const children: ChildProcess[] = [];

  try {
    const archive = await benchArchive(FILE_BYTES);
    print(`file: ${archive.length} bytes; ${PER_LEVEL} uploads per round and figure, ${ROUNDS} rounds per level`);

    // The service in a process of its own, as it is deployed: the clients never share its event loop.
    const all = await startProcess('all', { ...env, DATABASE_RUN_MIGRATIONS: 'false' });
    try {
      const url = all.url!;
      await measure('one process (PROCESS_ROLE all)', url, await makeTenant(url, config), archive, baselineUrl, poller);
      print(`peak RSS: all ${fmt(peakRssMb(all.child.pid), 0, 0)} MB`);
    } finally {
      await stopProcesses([all.child]);
    }

    const api = await startProcess('api', { ...env, DATABASE_RUN_MIGRATIONS: 'false' });
    const worker = await startProcess('worker', { ...env, DATABASE_RUN_MIGRATIONS: 'false' });
    children.push(api.child, worker.child);
    await measure(
      'two processes (PROCESS_ROLE api + worker)',
      api.url!,
      await makeTenant(api.url!, config),
      archive,
      baselineUrl,
      poller,
    );
    print(
      `peak RSS: api ${fmt(peakRssMb(api.child.pid), 0, 0)} MB, worker ${fmt(peakRssMb(worker.child.pid), 0, 0)} MB`,
    );
    for (const file of writePlots(uploadPlots(parseUploadOutput(printed.join('\n'))), process.env.BENCH_PLOT_DIR)) {
      print(`plot: ${file}`);
    }
  } finally {
    poller.stop();
    await stopProcesses(children);
    await new Promise((r) => baseline.close(r));
    rmSync(baselineDir, { recursive: true, force: true });
    await setup.cleanup();
  }
}

run(main);
