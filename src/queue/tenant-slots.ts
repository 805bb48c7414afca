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
  return 0
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
return 1
`;

// Called once the job that found no slot is in the delayed set: it joins the sent-back list, and if a
// slot was freed meanwhile (a release that found the list without it), the longest-waiting sent-back
// job is named to be woken now. Between the two scripts no wake can be lost this way.
const PARK = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]))
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  return redis.call('LPOP', KEYS[2])
end
return false
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
  /**
   * A slot not released within this time is free again (a worker that died holding it). It is also how
   * long a job that found its tenant's slots taken stays in the delayed set unless a freed slot wakes it
   * first: the wake is what brings it back; the delay is only the net under it (a lost wake).
   */
  leaseMs: number;
}

/**
 * Fairness between tenants on a shared queue: a tenant may hold at most `perTenant` of the running
 * jobs. A job over its tenant's share goes back to the delayed set (not counted as an attempt) until a
 * slot of its tenant frees and wakes it, so the workers reach the jobs of other tenants queued behind
 * it instead of filling every slot with one tenant's backlog, and a sent-back job is taken up again
 * once, when it can run, rather than on every turn of a timer. BullMQ's own groups do this in its paid edition only.
 */
@Injectable()
export class TenantSlots {
  private readonly acquire: (...args: string[]) => Promise<unknown>;
  private readonly park: (...args: string[]) => Promise<unknown>;
  private readonly release: (...args: string[]) => Promise<unknown>;

  constructor(private readonly redis: RedisService) {
    this.acquire = redis.script('sdfTenantSlotAcquire', 2, ACQUIRE);
    this.park = redis.script('sdfTenantSlotPark', 2, PARK);
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
      // Jitter keeps a backlog of one tenant from coming back as one block should its wakes be lost.
      const delay = policy.leaseMs + Math.floor(Math.random() * policy.leaseMs);
      await job.moveToDelayed(Date.now() + delay, token);
      const freed = await this.park(key, sentBack, member, String(policy.perTenant), String(policy.leaseMs));
      await this.wakeNext(job, freed, sentBack);
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
