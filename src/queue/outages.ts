import { Logger } from '@nestjs/common';
import { DelayedError, type Job } from 'bullmq';
import { diskFault, isInfrastructureError } from '../common/infrastructure-errors.js';
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
