import { Logger } from '@nestjs/common';
import { DelayedError, type Job } from 'bullmq';

/** Node's network error codes that mean "the other side is not there (yet)", never "your input is wrong". */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * PostgreSQL SQLSTATEs of a server that cannot serve now: class 08 (connection exception), 57P01-57P03
 * (shut down, crashed, starting up), 53300 (too many connections) and 40001/40P01 are not here: a
 * serialization failure is the statement's, retried by the job's own attempts.
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** Messages of node-postgres, the pool and ioredis when the server went away mid-use. */
const UNAVAILABLE_MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error/i,
  /Connection is closed/i,
  /Reached the max retries per request limit/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
];

/**
 * Whether an error says that PostgreSQL, Redis or the store could not be reached, rather than that the
 * job's work failed. Such an error says nothing about the job: it must not use up its attempts (S9's
 * three are for the job's own faults), or a few seconds of outage would dead-letter a whole backlog.
 * TypeORM wraps the driver's error (`driverError`); AggregateError (a failed connect to every address
 * of a host) carries the causes.
 */
export function isInfrastructureError(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const e = err as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || isUnavailableSqlState(e.code))) return true;
  if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(e.message as string))) return true;
  if (isInfrastructureError(e.driverError, depth + 1) || isInfrastructureError(e.cause, depth + 1)) return true;
  return Array.isArray(e.errors) && e.errors.some((inner) => isInfrastructureError(inner, depth + 1));
}

/** The first postponement waits this long; each further one while the outage lasts waits twice as long, up to the ceiling. */
const FIRST_DELAY_MS = 1_000;

export interface OutagePolicy {
  /** Longest wait between two tries of a postponed job (the delay doubles up to it). */
  maxDelayMs: number;
  /** Further errors that mean the queue's own infrastructure is away (the mail relay, for mail). */
  alsoUnavailable?: (err: unknown) => boolean;
}

/**
 * Jobs that meet an outage go back to the delayed set (BullMQ's DelayedError: no attempt used) and are
 * tried again with a doubling delay, for as long as the outage lasts. One log line when a queue first
 * meets an outage and one when a job of it succeeds again, never one per job: a backlog of thousands
 * must not flood the log.
 */
export class OutageGate {
  private readonly logger = new Logger('Outage');
  /** When this queue's current outage began (this process's view), and how many jobs it postponed. */
  private since: number | null = null;
  private postponed = 0;
  private readonly delays = new Map<string, number>();

  constructor(
    private readonly queue: string,
    private readonly policy: OutagePolicy,
  ) {}

  async run<T>(job: Job, token: string | undefined, work: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await work();
    } catch (err) {
      const away = isInfrastructureError(err) || this.policy.alsoUnavailable?.(err) === true;
      if (!away || token === undefined) throw err;
      await this.postpone(job, token, err);
      throw new DelayedError();
    }
    this.recovered(job);
    return result;
  }

  private async postpone(job: Job, token: string, err: unknown): Promise<void> {
    const key = job.id ?? '';
    const delay = Math.min(this.delays.get(key) ?? FIRST_DELAY_MS, this.policy.maxDelayMs);
    this.delays.set(key, Math.min(delay * 2, this.policy.maxDelayMs));
    if (this.since === null) {
      this.since = Date.now();
      this.logger.warn({
        msg: 'a dependency is unreachable: jobs are postponed, their attempts kept, until it answers again',
        queue: this.queue,
        reason: describe(err),
      });
    }
    this.postponed++;
    // With Redis itself down this throws too: the job's lock then lapses and the stalled-job check hands it
    // back once Redis answers, still without using an attempt.
    const jitter = Math.floor(Math.random() * Math.min(delay, 1_000));
    await job.moveToDelayed(Date.now() + delay + jitter, token);
  }

  private recovered(job: Job): void {
    this.delays.delete(job.id ?? '');
    if (this.since === null) return;
    this.logger.log({
      msg: 'dependencies answer again: postponed jobs resume',
      queue: this.queue,
      outage_ms: Date.now() - this.since,
      postponed: this.postponed,
    });
    this.since = null;
    this.postponed = 0;
    // Delays of jobs that have not come back yet start over at the next outage.
    if (this.delays.size > 10_000) this.delays.clear();
  }
}

function describe(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? `${e.code}: ` : '';
  return `${code}${typeof e?.message === 'string' ? e.message : String(err)}`.slice(0, 300);
}
