import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { BillingRepository } from './billing.repository.js';
import { UsageMeter } from './usage-meter.service.js';

const BATCH = 100;

/**
 * Copies the usage counters from Redis to `usage_periods` (M3: PostgreSQL is the record of each
 * period). Every API process flushes on a timer and once at shutdown; the rows carry Redis's change
 * counter, so two processes flushing the same tenant cannot write an older figure over a newer one.
 * A period whose end has passed (by the service clock) is written closed and leaves Redis. Storage
 * changes left uncounted are counted here too (M3).
 */
@Injectable()
export class UsageFlusher implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('UsageFlusher');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    private readonly meter: UsageMeter,
    private readonly billing: BillingRepository,
    private readonly clock: Clock,
    @Inject(AppConfig) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    if (!this.config.runsApi) return;
    this.timer = setInterval(() => {
      this.flush().catch((err: unknown) => this.logger.error({ msg: 'usage flush failed', err: String(err) }));
    }, this.config.env.USAGE_FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  /** Before Redis and PostgreSQL close (their hooks run at onApplicationShutdown). */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush().catch((err: unknown) => this.logger.error({ msg: 'usage flush failed', err: String(err) }));
  }

  /** Flushes every tenant with changes; returns how many. One flush at a time per process. */
  flush(): Promise<number> {
    this.running ??= this.flushAll().finally(() => (this.running = undefined));
    return this.running;
  }

  private async flushAll(): Promise<number> {
    // Storage changes nobody else will count (a sign job out of attempts while Redis was away, a delete
    // whose API process died or met a Redis failure right after its commit) are counted first, so this
    // flush carries them.
    while ((await this.meter.countLeftStorageChanges(BATCH)) === BATCH);
    let total = 0;
    for (;;) {
      const tenants = await this.meter.takeDirty(BATCH);
      if (tenants.length === 0) return total;
      for (const tenantId of tenants) {
        try {
          await this.flushTenant(tenantId);
          total++;
        } catch (err) {
          await this.meter.markDirty(tenantId);
          throw err;
        }
      }
    }
  }

  private async flushTenant(tenantId: string): Promise<void> {
    const fields = await this.meter.counters(tenantId);
    const now = this.clock.now().getTime();
    const seq = Number(fields.seq ?? 0);
    const storage = Number(fields.b ?? 0);
    for (const name of Object.keys(fields)) {
      if (!name.startsWith('e:')) continue;
      const ps = name.slice(2);
      const end = Number(fields[name]);
      const closed = end <= now;
      await this.billing.upsertUsage(
        tenantId,
        { start: new Date(Number(ps)), end: new Date(end) },
        {
          documents_uploaded: Number(fields[`d:${ps}`] ?? 0),
          api_calls: Number(fields[`c:${ps}`] ?? 0),
          storage_bytes: storage,
          seq,
        },
        closed,
      );
      if (closed) await this.meter.dropClosed(tenantId, ps, fields[`d:${ps}`] ?? '', fields[`c:${ps}`] ?? '');
    }
  }
}
