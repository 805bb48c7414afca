import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { diskFault } from './infrastructure-errors.js';

export interface Readiness {
  status: 'ok' | 'unavailable';
  checks: Record<string, 'ok' | 'unavailable'>;
  /** Why a check is unavailable, where it says (a disk full or read-only, free space below the threshold). */
  reasons: Record<string, string>;
  /** What background work is doing (the summary backfill's progress); never decides the status. */
  details: Record<string, unknown>;
}

/** A probe's failure whose reason is fit to show on the public readiness answer (no path, no secret). */
export class NotReady extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'NotReady';
  }
}

/** What readiness says of a probe's failure: its own reason, a disk fault's, or nothing (it just failed). */
function reasonOf(err: unknown): string | undefined {
  if (err instanceof NotReady) return err.message;
  const fault = diskFault(err);
  if (fault === 'full') return 'no space left on the storage disk';
  if (fault === 'unwritable') return `the storage disk takes no writes (${(err as { code: string }).code})`;
  return undefined;
}

/** A probe that has not answered by then counts as unavailable. */
const PROBE_TIMEOUT_MS = 2000;

function withTimeout<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), PROBE_TIMEOUT_MS);
  });
  return Promise.race([p, expired]).finally(() => clearTimeout(timer));
}

/**
 * One result shared by every caller for `ttlMs` after it was made, and one run in flight shared by
 * every caller that arrives meanwhile. A failed result is kept exactly as long as a good one.
 */
export class SharedResult<T> {
  private value: { result: T; until: number } | undefined;
  private inFlight: Promise<T> | undefined;

  constructor(
    private readonly run: () => Promise<T>,
    private readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(): Promise<T> {
    if (this.value && this.now() < this.value.until) return Promise.resolve(this.value.result);
    this.inFlight ??= this.run()
      .then((result) => {
        this.value = { result, until: this.now() + this.ttlMs };
        return result;
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }
}

/**
 * S15 readiness: the probes (database and Redis from the health controller, storage from its module),
 * keyed by the name shown in /health/ready. `/health/ready` is public, so its answer comes from a
 * result cached for READINESS_CACHE_MS: a flood of anonymous calls costs one query, one ping and one
 * probe file per window, not one per call.
 */
@Injectable()
export class ReadinessChecks {
  private readonly probes = new Map<string, () => Promise<unknown>>();
  private readonly details = new Map<string, () => Promise<unknown>>();
  private readonly shared: SharedResult<Readiness>;

  constructor(@Inject(AppConfig) config: AppConfig) {
    this.shared = new SharedResult(() => this.runProbes(), config.env.READINESS_CACHE_MS);
  }

  register(name: string, probe: () => Promise<unknown>): void {
    this.probes.set(name, probe);
  }

  /** A detail shown beside the checks; one that fails or is slow is left out, and the status stays. */
  registerDetail(name: string, read: () => Promise<unknown>): void {
    this.details.set(name, read);
  }

  /** The latest result, at most READINESS_CACHE_MS old once made (a check itself takes at most 2 s). */
  status(): Promise<Readiness> {
    return this.shared.get();
  }

  /** The probes run now, past the cache: for a process that watches an outage of its own. */
  probeNow(): Promise<Readiness> {
    return this.runProbes();
  }

  private async runProbes(): Promise<Readiness> {
    const checks: Readiness['checks'] = {};
    const reasons: Readiness['reasons'] = {};
    await Promise.all(
      [...this.probes].map(async ([name, probe]) => {
        checks[name] = await withTimeout(Promise.resolve().then(probe)).then(
          () => 'ok' as const,
          (err: unknown) => {
            const reason = reasonOf(err);
            if (reason !== undefined) reasons[name] = reason;
            return 'unavailable' as const;
          },
        );
      }),
    );
    const details: Readiness['details'] = {};
    await Promise.all(
      [...this.details].map(async ([name, read]) => {
        await withTimeout(Promise.resolve().then(read)).then(
          (value) => void (details[name] = value),
          () => undefined,
        );
      }),
    );
    const ok = Object.values(checks).every((c) => c === 'ok');
    return { status: ok ? 'ok' : 'unavailable', checks, reasons, details };
  }
}
