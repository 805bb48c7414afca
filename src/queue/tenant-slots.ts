import { Injectable } from '@nestjs/common';
import { DelayedError, Job } from 'bullmq';
import { RedisService } from '../redis/redis.module.js';

// A sorted set per queue and tenant: member = job id, score = when its lease ends (Redis clock). Leases
// that a dead worker never released expire by themselves, so a crash cannot leak a slot for good.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  redis.call('RPUSH', KEYS[2], ARGV[1])
  redis.call('PEXPIRE', KEYS[2], lease)
  return 0
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
return 1
`;

// Frees the slot and names the tenant's longest-waiting sent-back job (if any), to be woken at once.
const RELEASE = `
redis.call('ZREM', KEYS[1], ARGV[1])
return redis.call('LPOP', KEYS[2])
`;

/** A released slot wakes at most this many sent-back ids in turn (the list may name a job twice). */
const WAKE_TRIES = 3;

export interface SlotPolicy {
  /** Jobs of one tenant running at once in this queue, across every worker process. */
  perTenant: number;
  /** A slot not released within this time is free again (a worker that died holding it). */
  leaseMs: number;
  /** How long a job that found its tenant's slots taken waits before it is tried again. */
  retryDelayMs: number;
}

/**
 * Fairness between tenants on a shared queue: a tenant may hold at most `perTenant` of the running
 * jobs. A job over its tenant's share goes back to the delayed set for a moment (not counted as an
 * attempt), so the workers reach the jobs of other tenants queued behind it instead of filling every
 * slot with one tenant's backlog. BullMQ's own groups do this in its paid edition only.
 */
@Injectable()
export class TenantSlots {
  private readonly acquire: (...args: string[]) => Promise<unknown>;
  private readonly release: (...args: string[]) => Promise<unknown>;

  constructor(private readonly redis: RedisService) {
    this.acquire = redis.script('sdfTenantSlotAcquire', 2, ACQUIRE);
    this.release = redis.script('sdfTenantSlotRelease', 2, RELEASE);
  }

  /**
   * Runs `work` in a slot of the job's tenant, or moves the job to the delayed set and throws BullMQ's
   * DelayedError (the worker then leaves the job alone) when the tenant's slots are all taken.
   */
  async run<T>(
    queue: string,
    tenantId: string,
    job: Job,
    token: string | undefined,
    policy: SlotPolicy,
    work: () => Promise<T>,
  ): Promise<T> {
    const key = this.redis.key('slots', queue, tenantId);
    const sentBack = this.redis.key('slots', queue, tenantId, 'sent-back');
    const member = job.id ?? '';
    const acquired = await this.acquire(key, sentBack, member, String(policy.perTenant), String(policy.leaseMs));
    if (acquired !== 1) {
      // Jitter keeps a backlog of one tenant from coming back as one block.
      const delay = policy.retryDelayMs + Math.floor(Math.random() * policy.retryDelayMs);
      await job.moveToDelayed(Date.now() + delay, token);
      throw new DelayedError();
    }
    try {
      return await work();
    } finally {
      await this.wakeNext(job, await this.release(key, sentBack, member), sentBack);
    }
  }

  /**
   * The freed slot goes to the tenant's job that was sent back longest ago: it is moved from the delayed
   * set to the wait list now rather than when its delay ends, so a tenant alone on a busy queue keeps
   * its share of the slots busy. An id that is no longer delayed (woken already, or deleted) is skipped.
   */
  private async wakeNext(job: Job, first: unknown, sentBack: string): Promise<void> {
    // The job's own queue handle (BullMQ keeps it on the job) reads the sent-back job.
    const queue = (job as unknown as { queue: Parameters<typeof Job.fromId>[0] }).queue;
    let id = first;
    for (let tries = 0; typeof id === 'string' && tries < WAKE_TRIES; tries++) {
      const waiting = await Job.fromId(queue, id);
      if (waiting && (await waiting.isDelayed())) {
        const woken = await waiting.promote().then(
          () => true,
          () => false,
        );
        if (woken) return;
      }
      id = await this.redis.client.lpop(sentBack);
    }
  }

  /** How many slots of the tenant are held now (for tests and diagnostics). */
  async held(queue: string, tenantId: string): Promise<number> {
    const key = this.redis.key('slots', queue, tenantId);
    await this.redis.client.zremrangebyscore(key, '-inf', Date.now());
    return this.redis.client.zcard(key);
  }
}
