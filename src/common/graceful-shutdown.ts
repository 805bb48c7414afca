import type { Server, ServerResponse } from 'node:http';
import type { INestApplication, LoggerService } from '@nestjs/common';
import { WorkerHost } from '@nestjs/bullmq';
import { DiscoveryService } from '@nestjs/core';
import type { Worker } from 'bullmq';

export interface ShutdownOptions {
  /** The whole drain's bound (SHUTDOWN_TIMEOUT_MS), below the orchestrator's grace period. */
  timeoutMs: number;
  logger: LoggerService;
  /** Exits the process; the test of this module passes its own. */
  exit?: (code: number) => void;
}

/**
 * Emitted on the HTTP server when the drain begins: responses that never finish by themselves (event
 * streams) end at once, so their clients reconnect elsewhere instead of holding the drain to its bound.
 */
export const SHUTDOWN_BEGINS = 'sdf:shutdown-begins';

/** Part of the bound kept for closing connections to the database and Redis once the drain is over. */
const CLOSE_RESERVE_MS = 1_000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)).unref());
}

/** The BullMQ workers of the app's processors (none in an API process). */
function workersOf(app: INestApplication): Worker[] {
  const discovery = app.get(DiscoveryService, { strict: false });
  const workers: Worker[] = [];
  for (const wrapper of discovery.getProviders()) {
    const instance: unknown = wrapper.instance;
    if (!(instance instanceof WorkerHost)) continue;
    try {
      workers.push(instance.worker);
    } catch {
      // A processor whose worker was never created.
    }
  }
  return workers;
}

/**
 * SIGTERM (an orchestrator's stop) and SIGINT: stop accepting connections, let requests in flight finish
 * and workers finish their jobs, all within `timeoutMs`; what is left then is cut (a job goes back to
 * the queue: its lock lapses and another worker takes it over), and the process exits 0. One JSON line
 * when the shutdown begins, one when it ends.
 */
export function installGracefulShutdown(app: INestApplication, options: ShutdownOptions): void {
  const inFlight = countRequests(app.getHttpServer() as Server);
  let started = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (started) return;
    started = true;
    void drain(app, options, signal, inFlight).then(
      (code) => (options.exit ?? process.exit)(code),
      () => (options.exit ?? process.exit)(1),
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}

/** How many requests the server is answering right now. */
function countRequests(server: Server): () => number {
  let inFlight = 0;
  server.on('request', (_req, res: ServerResponse) => {
    inFlight++;
    res.once('close', () => inFlight--);
  });
  return () => inFlight;
}

export async function drain(
  app: INestApplication,
  options: ShutdownOptions,
  signal: string,
  inFlight: () => number = () => 0,
): Promise<number> {
  const { logger, timeoutMs } = options;
  const began = Date.now();
  const deadline = began + Math.max(0, timeoutMs - CLOSE_RESERVE_MS);
  const server = app.getHttpServer() as Server;
  const listening = server.listening;
  logger.log({ msg: 'shutdown began', signal, timeout_ms: timeoutMs }, 'Shutdown');

  server.emit(SHUTDOWN_BEGINS);
  // No new connections from here on: the listening socket closes, idle keep-alive connections too.
  const closed = listening ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
  const workers = workersOf(app);
  const jobsDone = Promise.all(workers.map((w) => w.close())).then(() => true);

  // Requests in flight finish; a connection that falls idle is closed at once (its client gets no
  // half-read keep-alive connection to send the next request on).
  const requestsDone = (async () => {
    while (Date.now() < deadline) {
      server.closeIdleConnections();
      if (await Promise.race([closed.then(() => true), sleep(50).then(() => false)])) return true;
    }
    return false;
  })();
  const [requests, jobs] = await Promise.all([
    requestsDone,
    Promise.race([jobsDone, sleep(deadline - Date.now()).then(() => false)]),
  ]);
  const cutRequests = requests ? 0 : inFlight();
  if (!requests) server.closeAllConnections();
  if (!jobs) {
    // Jobs still running are handed back: their locks are no longer renewed, and another worker takes
    // them over once they lapse (WORKER_LOCK_DURATION_MS). Every job is idempotent.
    await Promise.race([Promise.all(workers.map((w) => w.close(true))), sleep(CLOSE_RESERVE_MS / 2)]);
  }
  await Promise.race([app.close(), sleep(began + timeoutMs - Date.now())]);
  logger.log(
    {
      msg: 'shutdown complete',
      signal,
      duration_ms: Date.now() - began,
      requests_cut: cutRequests,
      jobs_handed_back: !jobs,
    },
    'Shutdown',
  );
  return 0;
}
