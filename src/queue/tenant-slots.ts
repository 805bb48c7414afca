import { Injectable } from '@nestjs/common';
import { DelayedError, Job } from 'bullmq';
import { RedisService } from '../redis/redis.module.js';

// Per queue and tenant: a sorted set of running job ids (score = when its lease ends, Redis clock; a
// lease a dead worker never released expires by itself, so a crash cannot leak a slot for good), the
// list of jobs sent back, and, where the queue tracks it, the set of its jobs waiting to run. Per queue:
// the tenants with jobs waiting (score = when that entry lapses unless refreshed).
//
// A job over its tenant's share is sent back only while another tenant has jobs waiting: alone on the
// queue, a tenant uses every worker, and its jobs keep their order.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[3])
local tracked = ARGV[5] == '1'
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  if not tracked then return 0 end
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  local others = redis.call('ZCARD', KEYS[3])
  if redis.call('ZSCORE', KEYS[3], ARGV[4]) then others = others - 1 end
  if others > 0 then return 0 end
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
if tracked then
  redis.call('SREM', KEYS[2], ARGV[1])
  if redis.call('SCARD', KEYS[2]) == 0 then redis.call('ZREM', KEYS[3], ARGV[4]) end
end
return 1
`;

// A job is waiting: recorded before it is enqueued (and again when it is sent back), kept for a while
// past the last such mark, so a mark whose job never ran (an enqueue that failed after it) lapses.
const WAITING = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[2])
redis.call('PEXPIRE', KEYS[2], ttl)
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

/** How long a waiting mark lasts past the last enqueue or send-back that refreshed it. */
const WAITING_TTL_MS = 15 * 60_000;

export interface SlotPolicy {
  /** Jobs of one tenant running at once in this queue, across every worker process. */
  perTenant: number;
  /**
   * A slot not released within this time is free again (a worker that died holding it). It is also how
   * long a job that found its tenant's slots taken stays in the delayed set unless a freed slot wakes it
   * first: the wake is what brings it back; the delay is only the net under it (a lost wake).
   */
  leaseMs: number;
  /**
   * The queue's producers call `waiting()` for every job: a job over its tenant's share then runs
   * anyway while no other tenant has jobs waiting. Without it, the share holds at all times.
   */
  tracksWaiting?: boolean;
}

/**
 * Fairness between tenants on a shared queue: a tenant may hold at most `perTenant` of the running
 * jobs while other tenants' jobs wait (on a queue that `tracksWaiting`; always, on one that does not).
 * A job over its tenant's share goes back to the delayed set (not counted as an attempt) until a slot of
 * its tenant frees and wakes it, so the workers reach the jobs of other tenants queued behind it instead
 * of filling every slot with one tenant's backlog, and a sent-back job is taken up again once, when it
 * can run, rather than on every turn of a timer. BullMQ's own groups do this in its paid edition only.
 */
@Injectable()
export class TenantSlots {
  private readonly acquire: (...args: string[]) => Promise<unknown>;
  private readonly park: (...args: string[]) => Promise<unknown>;
  private readonly mark: (...args: string[]) => Promise<unknown>;
  private readonly release: (...args: string[]) => Promise<unknown>;

  constructor(private readonly redis: RedisService) {
    this.acquire = redis.script('sdfTenantSlotAcquire', 3, ACQUIRE);
    this.park = redis.script('sdfTenantSlotPark', 2, PARK);
    this.mark = redis.script('sdfTenantSlotWaiting', 2, WAITING);
    this.release = redis.script('sdfTenantSlotRelease', 2, RELEASE);
  }

  /**
   * Marks a job of the tenant as waiting to run, before it is enqueued (for a queue whose policy
   * `tracksWaiting`): while it waits, other tenants' jobs keep to their share.
   */
  async waiting(queue: string, tenantId: string, jobId: string): Promise<void> {
    const { waitingIds, waitingTenants } = this.keys(queue, tenantId);
    await this.mark(waitingIds, waitingTenants, jobId, tenantId, String(WAITING_TTL_MS));
  }

  private keys(queue: string, tenantId: string) {
    return {
      slots: this.redis.key('slots', queue, tenantId),
      sentBack: this.redis.key('slots', queue, tenantId, 'sent-back'),
      waitingIds: this.redis.key('slots', queue, tenantId, 'waiting'),
      waitingTenants: this.redis.key('slots', queue, 'waiting'),
    };
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
    const { slots: key, sentBack, waitingIds, waitingTenants } = this.keys(queue, tenantId);
    const member = job.id ?? '';
    const tracked = policy.tracksWaiting ? '1' : '0';
    const acquired = await this.acquire(
      key,
      waitingIds,
      waitingTenants,
      member,
      String(policy.perTenant),
      String(policy.leaseMs),
      tenantId,
      tracked,
    );
    if (acquired !== 1) {
      // Jitter keeps a backlog of one tenant from coming back as one block should its wakes be lost.
      const delay = policy.leaseMs + Math.floor(Math.random() * policy.leaseMs);
      await job.moveToDelayed(Date.now() + delay, token);
      // Still waiting: the mark is refreshed, so a long wait does not let it lapse.
      if (policy.tracksWaiting) await this.waiting(queue, tenantId, member);
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
