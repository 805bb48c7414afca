import { Logger } from '@nestjs/common';
import type { DiskFault } from './infrastructure-errors.js';

/**
 * Requests that met a full or unwritable disk (answered 507 or 503), as episodes: one log line when the
 * first request of an episode meets it and one, with its duration and the count, when a write succeeds
 * again (an upload stored, or the readiness probe's file written with space above the threshold), never
 * one per request: a busy service on a full disk must not fill the log as well. Jobs log theirs per queue
 * (OutageGate). One per process, as the disk is.
 */
export class DiskOutages {
  static readonly shared = new DiskOutages();

  private readonly logger = new Logger('Storage');
  private since: number | null = null;
  private fault: DiskFault | null = null;
  private refused = 0;

  met(fault: DiskFault, err: unknown): void {
    this.refused++;
    if (this.since !== null && this.fault === fault) return;
    // A disk that went from full to read-only (or back) is a new episode: the operator's fix differs.
    if (this.since !== null) this.ended();
    this.since = Date.now();
    this.fault = fault;
    this.refused = 1;
    this.logger.warn({
      msg:
        fault === 'full'
          ? 'storage is full: writes are refused (507 STORAGE_FULL) until space returns'
          : 'storage takes no writes: writes are refused (503 STORAGE_UNAVAILABLE) until it does',
      reason: describe(err),
    });
  }

  /** A write succeeded: the episode, if one is open, is over. */
  cleared(): void {
    if (this.since !== null) this.ended();
  }

  private ended(): void {
    this.logger.log({
      msg: 'storage takes writes again',
      fault: this.fault,
      outage_ms: Date.now() - this.since!,
      refused: this.refused,
    });
    this.since = null;
    this.fault = null;
    this.refused = 0;
  }
}

function describe(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? `${e.code}: ` : '';
  return `${code}${typeof e?.message === 'string' ? e.message : String(err)}`.slice(0, 300);
}
