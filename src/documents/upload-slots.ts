import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AppError } from '../common/errors.js';
import { Periodic } from '../common/periodic.js';
import { AppConfig } from '../config/app-config.js';
import { RedisService } from '../redis/redis.module.js';
import { isInfrastructureError } from '../common/infrastructure-errors.js';

// Per tenant: a sorted set of the uploads in flight (score = when the entry's lease ends, Redis clock).
// Every process renews the leases of its own uploads while they run (its heartbeat), so an entry outlives
// its request only when the process died holding it, and then by one lease (UPLOAD_SLOT_LEASE_MS) at most.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
return 1
`;

// Renews the leases of the listed entries that are still there (XX: a released one is not brought back).
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], lease)
`;

/** Retry-After of a refused upload: uploads end within seconds on a sane link. */
const RETRY_AFTER_SECONDS = 5;

export function tooManyUploads(limit: number): AppError {
  const error = AppError.of('RATE_LIMITED', `Too many uploads in flight for this tenant (at most ${limit} at once)`, [
    { path: '/uploads_in_flight', message: `must be at most ${limit}` },
  ]);
  return new AppError(error.status, error.code, error.message, error.details, {
    'Retry-After': String(RETRY_AFTER_SECONDS),
  });
}

/**
 * Bounds the request bodies (POST /upload, /sdf, /validate) one tenant has in flight at once, across
 * every API process (the count lives in Redis), so one tenant's many slow uploads cannot hold every
 * connection, spool file and event-loop turn of the service.
 */
@Injectable()
export class UploadSlots implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('UploadSlots');
  private readonly acquireScript: (...args: string[]) => Promise<unknown>;
  private readonly renewScript: (...args: string[]) => Promise<unknown>;
  /** This process's entries, by tenant: the ones it renews. */
  private readonly held = new Map<string, Set<string>>();
  private readonly renewer = new Periodic(
    () => this.renew(),
    (err) => this.logger.warn({ msg: 'upload slot leases not renewed', err: String(err) }),
  );

  constructor(
    private readonly redis: RedisService,
    @Inject(AppConfig) private readonly config: AppConfig,
  ) {
    this.acquireScript = redis.script('sdfUploadSlotAcquire', 1, ACQUIRE);
    this.renewScript = redis.script('sdfUploadSlotRenew', 1, RENEW);
  }

  onModuleInit(): void {
    // Renewed every third of the lease: two renewals may fail (a Redis blip) before a live upload's entry lapses.
    this.renewer.start(Math.floor(this.leaseMs / 3));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.renewer.stop();
  }

  /** How long an entry lasts unless its process renews it. */
  private get leaseMs(): number {
    return this.config.env.UPLOAD_SLOT_LEASE_MS;
  }

  get limit(): number {
    return this.config.env.UPLOADS_IN_FLIGHT_PER_TENANT;
  }

  /**
   * Runs `work` in one of the tenant's upload slots, or throws 429 RATE_LIMITED (Retry-After) when they
   * are all taken. The slot is given back when `work` ends or `gone` fires (the client went away),
   * whichever comes first, so a request that dies mid-body frees its slot at once.
   */
  async run<T>(tenantId: string, gone: (release: () => void) => void, work: () => Promise<T>): Promise<T> {
    const key = this.key(tenantId);
    const member = randomUUID();
    const ok = await this.acquireScript(key, member, String(this.limit), String(this.leaseMs));
    if (ok !== 1) throw tooManyUploads(this.limit);
    const mine = this.held.get(tenantId) ?? new Set<string>();
    this.held.set(tenantId, mine.add(member));
    let released: Promise<void> | undefined;
    const release = () => {
      released ??= (async () => {
        mine.delete(member);
        if (mine.size === 0 && this.held.get(tenantId) === mine) this.held.delete(tenantId);
        await this.redis.client.zrem(key, member);
      })().catch((err: unknown) => {
        // The lease, no longer renewed, frees it within UPLOAD_SLOT_LEASE_MS.
        // In a Redis outage the outage itself is logged once; not once more per upload.
        const level = isInfrastructureError(err) ? 'debug' : 'warn';
        this.logger[level]({ msg: 'upload slot not released', tenant_id: tenantId, err: String(err) });
      });
      return released;
    };
    gone(() => void release());
    try {
      return await work();
    } finally {
      await release();
    }
  }

  /** Uploads of the tenant in flight now, across every process. */
  async inFlight(tenantId: string): Promise<number> {
    const key = this.key(tenantId);
    const [, [, count]] = (await this.redis.client
      .multi()
      .zremrangebyscore(key, '-inf', Date.now())
      .zcard(key)
      .exec()) as [[null, number], [null, number]];
    return count;
  }

  private async renew(): Promise<void> {
    for (const [tenantId, members] of this.held) {
      if (members.size) await this.renewScript(this.key(tenantId), String(this.leaseMs), ...members);
    }
  }

  private key(tenantId: string): string {
    return this.redis.key('uploads', tenantId);
  }
}
