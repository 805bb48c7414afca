import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { DelayedError, type Job } from 'bullmq';
import { diskFault, isInfrastructureError } from '../common/infrastructure-errors.js';
import { ReadinessChecks } from '../common/readiness.js';
import { actingForTenant } from '../database/tenant-scope.js';

/** The first postponement waits this long; each further one while the outage lasts waits twice as long, up to the ceiling. */
const FIRST_DELAY_MS = 1_000;

export interface OutagePolicy {
  /** Longest wait between two tries of a postponed job (the delay doubles up to it). */
  maxDelayMs: number;
  /** Further errors that mean the queue's own infrastructure is away (the mail relay, for mail). */
  alsoUnavailable?: (err: unknown) => boolean;
}

/**
 * Jobs that meet an outage (PostgreSQL, Redis or the store unreachable, the disk full or read-only) go back to the delayed set (BullMQ's DelayedError: no attempt used) and are
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
      // Every job acts for the tenant named in its data: its transactions see that tenant's rows alone.
      result = await actingForTenant(tenantOf(job.data), work, `${this.queue}:${job.id ?? ''}`);
    } catch (err) {
      // A full or unwritable disk (the store's, or a worker's temporary folder) is an outage too: the job
      // succeeds unchanged once space returns, so it must not use up its attempts meanwhile.
      const away = isInfrastructureError(err) || diskFault(err) !== null || this.policy.alsoUnavailable?.(err) === true;
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

/** The tenant a job acts for: `tenantId` or `tenant_id` in its data (STYLE: every payload carries it). */
function tenantOf(data: unknown): string | undefined {
  const d = data as { tenantId?: unknown; tenant_id?: unknown } | null;
  const id = d?.tenantId ?? d?.tenant_id;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** The first failure's line waits this long for the other tasks that meet the same outage, to name them. */
const GATHER_MS = 3_000;
/** While an outage lasts, the dependencies are probed this often to see it end. */
const PROBE_EVERY_MS = 2_000;
/** A task failure that no probe explains (the dependency answered again at once) is said at most this often. */
const BLIP_EVERY_MS = 60_000;
/**
 * A round that was already under way when an outage was said to end can still fail with its error (a
 * connection attempt begun while the server was starting up): within this time after the end such a
 * failure is the outage's tail, not news, and is not said again.
 */
const TAIL_MS = 30_000;
/** Dependencies that say their own outage, once when it starts and once when it ends (RedisOutageLog). */
const SELF_LOGGED = new Set(['redis']);

interface BackgroundOutage {
  since: number;
  affected: Set<string>;
  failures: number;
  reason: string;
  unavailable: Set<string>;
  said: boolean;
}

/**
 * The process's background tasks (outbox dispatch and its LISTEN connection, sweepers, schedulers) report
 * their failures here instead of logging each failed round: a dependency that is away for a minute makes
 * one line when the outage starts (which dependencies are unreachable, which tasks wait) and one when the
 * readiness probes answer again (how long it lasted), never one per round of every task.
 */
@Injectable()
export class BackgroundOutages implements OnApplicationShutdown {
  private readonly logger = new Logger('Outage');
  private outage: BackgroundOutage | null = null;
  private timer: NodeJS.Timeout | undefined;
  private lastBlip = 0;
  /** When the last outage that was said ended. */
  private lastEnd = 0;
  private stopped = false;

  constructor(private readonly readiness: ReadinessChecks) {}

  /**
   * A round of `task` failed. True when the error means a dependency is away: the outage is said here (once)
   * and the caller logs nothing; false for the task's own fault, which the caller logs as before.
   */
  failed(task: string, err: unknown): boolean {
    if (!isInfrastructureError(err)) return false;
    if (this.outage) {
      this.outage.affected.add(task);
      this.outage.failures++;
      return true;
    }
    this.outage = {
      since: Date.now(),
      affected: new Set([task]),
      failures: 1,
      reason: describe(err),
      unavailable: new Set(),
      said: false,
    };
    this.after(GATHER_MS, () => this.begin());
    return true;
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private after(ms: number, next: () => Promise<void>): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void next().catch(() => this.after(PROBE_EVERY_MS, next)), ms);
    this.timer.unref();
  }

  private async begin(): Promise<void> {
    const o = this.outage;
    if (!o) return;
    const down = await this.unavailable();
    if (down.length === 0) {
      // Every dependency answers by now: a passing fault, said as the tasks' own (at most once a minute).
      this.outage = null;
      if (Date.now() - this.lastEnd < TAIL_MS) {
        this.logger.debug({
          msg: 'a background task met the end of an outage',
          affected: [...o.affected],
          reason: o.reason,
        });
        return;
      }
      if (Date.now() - this.lastBlip < BLIP_EVERY_MS) return;
      this.lastBlip = Date.now();
      this.logger.warn({
        msg: 'a background task failed to reach a dependency',
        affected: [...o.affected],
        reason: o.reason,
      });
      return;
    }
    for (const d of down) o.unavailable.add(d);
    if (!down.every((d) => SELF_LOGGED.has(d))) {
      o.said = true;
      this.logger.warn({
        msg: 'background tasks wait: a dependency is unreachable; they retry quietly until it answers',
        unavailable: down,
        affected: [...o.affected],
        reason: o.reason,
      });
    }
    this.after(PROBE_EVERY_MS, () => this.watch());
  }

  private async watch(): Promise<void> {
    const o = this.outage;
    if (!o) return;
    const down = await this.unavailable();
    if (down.length > 0) {
      for (const d of down) o.unavailable.add(d);
      this.after(PROBE_EVERY_MS, () => this.watch());
      return;
    }
    this.outage = null;
    if (!o.said) return;
    this.lastEnd = Date.now();
    this.logger.log({
      msg: 'background tasks resume: dependencies answer again',
      unavailable: [...o.unavailable],
      affected: [...o.affected],
      outage_ms: Date.now() - o.since,
      failed_rounds: o.failures,
    });
  }

  private async unavailable(): Promise<string[]> {
    const { checks } = await this.readiness.probeNow();
    return Object.keys(checks)
      .filter((name) => checks[name] === 'unavailable')
      .sort();
  }
}
