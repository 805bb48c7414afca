import { Inject, Injectable, Logger } from '@nestjs/common';
import { AuditService } from '../audit/audit.service.js';
import { Clock } from '../common/clock.js';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { RedisService } from '../redis/redis.module.js';
import { UsageMetering, type MeteredDecision, type Reservation } from '../rate-limit/usage-metering.js';
import type { AuthTenant } from '../tenants/entities/tenant.entity.js';
import { TenantsRepository } from '../tenants/tenants.repository.js';
import { BillingRepository, type StorageChange } from './billing.repository.js';
import { calendarMonth, effectiveLimits, periodAt, type Limits, type Period } from './plans.js';

/*
 * Redis layout, per tenant (all under REDIS_PREFIX):
 *   bill:<tenant>  hash  rpm, docs, calls, bytes (limits; -1 = none), ps, pe (subscription period, ms; 0 = none)
 *   use:<tenant>   hash  d:<ps>, c:<ps> (documents, API calls of the period starting at ps), e:<ps> (its end),
 *                        b (bytes stored now), seq (change counter, orders the flushes),
 *                        g:<id> (storage change <id> is in b; removed once its row is gone from PostgreSQL)
 *   use:dirty      set   tenants whose counters changed since the last flush
 * `bill:` is the "seeded" mark: a script that finds it missing answers -1 and the caller seeds both
 * hashes from PostgreSQL (after a Redis restart nothing but the unflushed tail is lost).
 */

/** Shared by the scripts: the period holding ARGV now (ms): the subscription's, else the calendar month. */
const PERIOD = `
local function period(ps, pe, now, ms, me)
  local s, e = tonumber(ps), tonumber(pe)
  if s and e and s > 0 and s <= now and now < e then return ps, e end
  return ms, tonumber(me)
end
-- 1 for the first refusal of a quota in a period (its audit entry), 0 after.
local function first_refusal(base, quota, ps, ttl)
  if redis.call('SET', base .. ':x:' .. quota .. ':' .. ps, '1', 'NX', 'PX', ttl + 1000) then return 1 end
  return 0
end
`;

// S12 + M3 in one round trip: the fixed rate window (Redis time, as RateLimitService) and, for a
// metered request within the limit, the period's API-call count checked against the quota and raised.
export const METER_REQUEST_SCRIPT = `${PERIOD}
local st = redis.call('HMGET', KEYS[2], 'rpm', 'calls', 'ps', 'pe')
if not st[1] then return {-1} end
local limit = tonumber(st[1])
local t = redis.call('TIME')
local rnow = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local win = tonumber(ARGV[1])
local wstart = rnow - (rnow % win)
local rkey = KEYS[1] .. ':' .. wstart
local count = redis.call('INCR', rkey)
if count == 1 then redis.call('PEXPIRE', rkey, win + 1000) end
if count > limit then
  local first = 0
  if redis.call('SET', rkey .. ':rejected', '1', 'NX', 'PX', win + 1000) then first = 1 end
  return {0, limit, count, wstart + win, rnow, first, 0}
end
if ARGV[6] ~= '1' then return {1, limit, count, wstart + win, rnow, 0, 0} end
local now = tonumber(ARGV[2])
local ps, pe = period(st[3], st[4], now, ARGV[3], ARGV[4])
local quota = tonumber(st[2])
local used = redis.call('HINCRBY', KEYS[3], 'c:' .. ps, 1)
if quota >= 0 and used > quota then
  -- Refusals are the rare path: the count taken above is given back.
  redis.call('HINCRBY', KEYS[3], 'c:' .. ps, -1)
  return {2, limit, count, wstart + win, rnow, first_refusal(KEYS[3], 'api_calls', ps, pe - now), pe - now}
end
if used == 1 then redis.call('HSET', KEYS[3], 'e:' .. ps, pe) end
redis.call('HINCRBY', KEYS[3], 'seq', 1)
redis.call('SADD', KEYS[4], ARGV[5])
return {1, limit, count, wstart + win, rnow, 0, 0}
`;

// M3: an upload takes its document and its bytes in one step, so concurrent uploads never overshoot.
const RESERVE = `${PERIOD}
local st = redis.call('HMGET', KEYS[1], 'docs', 'bytes', 'ps', 'pe')
if not st[1] then return {-1} end
local now = tonumber(ARGV[1])
local ps, pe = period(st[3], st[4], now, ARGV[2], ARGV[3])
local size = tonumber(ARGV[5])
local dq, bq = tonumber(st[1]), tonumber(st[2])
local d = tonumber(redis.call('HGET', KEYS[2], 'd:' .. ps) or '0')
local b = tonumber(redis.call('HGET', KEYS[2], 'b') or '0')
if dq >= 0 and d + 1 > dq then return {0, pe - now, 'documents', first_refusal(KEYS[2], 'documents', ps, pe - now)} end
if bq >= 0 and b + size > bq then return {0, pe - now, 'storage', first_refusal(KEYS[2], 'storage', ps, pe - now)} end
redis.call('HINCRBY', KEYS[2], 'd:' .. ps, 1)
redis.call('HINCRBY', KEYS[2], 'b', size)
redis.call('HSET', KEYS[2], 'e:' .. ps, pe)
redis.call('HINCRBY', KEYS[2], 'seq', 1)
redis.call('SADD', KEYS[3], ARGV[4])
return {1, ps, 0}
`;

// Gives a reservation back. Skipped when the tenant is not seeded: the seed reads PostgreSQL, which
// already holds the outcome.
const ADJUST = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] ~= '' and redis.call('HEXISTS', KEYS[2], 'd:' .. ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[2], 'd:' .. ARGV[1], tonumber(ARGV[2]))
end
redis.call('HINCRBY', KEYS[2], 'b', tonumber(ARGV[3]))
redis.call('HINCRBY', KEYS[2], 'seq', 1)
redis.call('SADD', KEYS[3], ARGV[4])
return 1
`;

// M3: a committed storage change (a storage_changes row) enters b once: its mark is set in the same step,
// and a second call finds it and adds nothing. -1: not seeded (the caller seeds, which marks the changes
// already in the seeded figure, and calls again).
const COUNT_CHANGE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HSETNX', KEYS[2], 'g:' .. ARGV[1], '1') == 0 then return 0 end
redis.call('HINCRBY', KEYS[2], 'b', tonumber(ARGV[2]))
redis.call('HINCRBY', KEYS[2], 'seq', 1)
redis.call('SADD', KEYS[3], ARGV[3])
return 1
`;

// Seeds bytes stored from PostgreSQL unless Redis has the figure, and with it the marks of the storage
// changes that figure already holds (uncounted rows whose sizes are in the documents' sum): b and its
// marks are written together or not at all, so a change is either in b and marked, or neither.
const SEED_STORAGE = `
if redis.call('HSETNX', KEYS[1], 'b', ARGV[1]) == 0 then return 0 end
for i = 2, #ARGV do redis.call('HSET', KEYS[1], 'g:' .. ARGV[i], '1') end
return 1
`;

// A flushed, closed period leaves Redis only if nothing counted into it since the flush read it.
const DROP_CLOSED = `
local d = redis.call('HGET', KEYS[1], 'd:' .. ARGV[1]) or ''
local c = redis.call('HGET', KEYS[1], 'c:' .. ARGV[1]) or ''
if d == ARGV[2] and c == ARGV[3] then
  redis.call('HDEL', KEYS[1], 'd:' .. ARGV[1], 'c:' .. ARGV[1], 'e:' .. ARGV[1])
  return 1
end
return 0
`;

/** A count met a tenant whose counters Redis does not hold: seeded, then counted again. */
class NotSeeded extends Error {
  constructor(readonly tenantId: string) {
    super('usage counters not seeded');
  }
}

export interface UsageSnapshot {
  period: Period;
  limits: Limits;
  documents_uploaded: number;
  api_calls: number;
  storage_bytes: number;
}

const NONE = -1;
const limitValue = (v: number | null): number => (v === null ? NONE : v);
const retryAfter = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

type Script = (...args: string[]) => Promise<unknown>;
interface Scripts {
  sdfMeterRequest: Script;
  sdfMeterReserve: Script;
  sdfMeterAdjust: Script;
  sdfMeterDropClosed: Script;
  sdfMeterCountChange: Script;
  sdfMeterSeedStorage: Script;
}

/**
 * Usage per billing period (M3), counted in Redis so that no request writes to PostgreSQL; the flusher
 * copies the counters to `usage_periods`. Limits travel with the counters in Redis, so a plan change
 * reaches every instance's limiter at its next request. The managed deployment's usage metering port.
 */
@Injectable()
export class UsageMeter extends UsageMetering {
  private readonly logger = new Logger('UsageMeter');
  private readonly windowMs: number;
  private readonly scripts: Scripts;
  readonly dirtyKey: string;

  constructor(
    private readonly redis: RedisService,
    private readonly billing: BillingRepository,
    private readonly tenants: TenantsRepository,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    @Inject(AppConfig) config: AppConfig,
  ) {
    super();
    this.windowMs = config.env.RATE_LIMIT_WINDOW_SECONDS * 1000;
    this.dirtyKey = this.redis.key('use', 'dirty');
    // EVALSHA (ioredis loads the script on first use): the script body is not sent with every request.
    const client = this.redis.client;
    client.defineCommand('sdfMeterRequest', { numberOfKeys: 4, lua: METER_REQUEST_SCRIPT });
    client.defineCommand('sdfMeterReserve', { numberOfKeys: 3, lua: RESERVE });
    client.defineCommand('sdfMeterAdjust', { numberOfKeys: 3, lua: ADJUST });
    client.defineCommand('sdfMeterDropClosed', { numberOfKeys: 1, lua: DROP_CLOSED });
    client.defineCommand('sdfMeterCountChange', { numberOfKeys: 3, lua: COUNT_CHANGE });
    client.defineCommand('sdfMeterSeedStorage', { numberOfKeys: 1, lua: SEED_STORAGE });
    this.scripts = client as unknown as Scripts;
  }

  stateKey(tenantId: string): string {
    return this.redis.key('bill', tenantId);
  }

  usageKey(tenantId: string): string {
    return this.redis.key('use', tenantId);
  }

  private monthArgs(now: Date): [string, string, string] {
    const m = calendarMonth(now);
    return [String(now.getTime()), String(m.start.getTime()), String(m.end.getTime())];
  }

  /** The rate limit and, unless `metered` is false, the API-call count and quota: one script, one round trip. */
  async consumeRequest(tenant: Pick<AuthTenant, 'id'>, metered: boolean): Promise<MeteredDecision> {
    const tenantId = tenant.id;
    for (;;) {
      const [now, ms, me] = this.monthArgs(this.clock.now());
      const r = (await this.scripts.sdfMeterRequest(
        this.redis.key('rl', tenantId),
        this.stateKey(tenantId),
        this.usageKey(tenantId),
        this.dirtyKey,
        String(this.windowMs),
        now,
        ms,
        me,
        tenantId,
        metered ? '1' : '0',
      )) as number[];
      if (r[0] === -1) {
        await this.seed(tenantId);
        continue;
      }
      const [outcome, limit, count, resetMs, rnow, first, quotaMs] = r as [
        number,
        number,
        number,
        number,
        number,
        number,
        number,
      ];
      return {
        allowed: outcome !== 0,
        limit,
        remaining: Math.max(0, limit - count),
        resetAt: Math.ceil(resetMs / 1000),
        retryAfterSeconds: Math.max(1, Math.ceil((resetMs - rnow) / 1000)),
        firstRejection: outcome === 0 && first === 1,
        ...(outcome === 2 ? { quotaRetryAfterSeconds: retryAfter(quotaMs), firstQuotaRefusal: first === 1 } : {}),
      };
    }
  }

  /** Takes one document and `bytes` of storage from the period's quota, or says which quota is spent. */
  async reserveUpload(tenantId: string, bytes: number): Promise<Reservation> {
    for (;;) {
      const [now, ms, me] = this.monthArgs(this.clock.now());
      const r = (await this.scripts.sdfMeterReserve(
        this.stateKey(tenantId),
        this.usageKey(tenantId),
        this.dirtyKey,
        now,
        ms,
        me,
        tenantId,
        String(bytes),
      )) as [number, number | string, number | string, number?];
      if (r[0] === -1) {
        await this.seed(tenantId);
        continue;
      }
      if (r[0] === 1) return { ok: true, periodStart: String(r[1]), bytes };
      return { ok: false, retryAfterSeconds: retryAfter(Number(r[1])), quota: String(r[2]), firstRefusal: r[3] === 1 };
    }
  }

  /** Limits: a refusal is audited, once per quota and period (the scripts say which refusal is the first). */
  async auditRefusal(
    tenantId: string,
    quota: string,
    by: { actor: string; ip: string | null },
    request: { method: string; path: string },
  ): Promise<void> {
    await this.audit.record(this.billing.manager, {
      tenantId,
      action: 'quota.exceeded',
      actor: by.actor,
      ipAddress: by.ip,
      metadata: { quota, ...request },
    });
  }

  /** Undoes a reservation whose upload did not become a document. */
  async release(tenantId: string, reservation: Extract<Reservation, { ok: true }>): Promise<void> {
    await this.adjust(tenantId, reservation.periodStart, -1, -reservation.bytes);
  }

  readonly recordsStorageChanges = true;

  /** Counts the document's storage changes not counted yet (a signing's growth, a delete's freed bytes), each once. */
  async countStorageChanges(tenantId: string, documentId: string): Promise<void> {
    await this.countChanges({ tenantId, documentId });
  }

  /**
   * Counts the oldest storage changes left uncounted, of any tenant (a sign job out of attempts while
   * Redis was away, or an API process that died or met a Redis failure right after a delete's commit,
   * leaves its row behind); returns how many. Run by the flusher.
   */
  countLeftStorageChanges(limit: number): Promise<number> {
    return this.countChanges({ limit });
  }

  /**
   * Each change enters Redis with its mark (COUNT_CHANGE) while its row is locked, and the row is deleted
   * in that transaction. A death or a failure before the commit leaves the row: the next call finds the
   * mark (nothing added twice) or not (added now). After the commit no call sees the row again, so the
   * marks go.
   */
  private async countChanges(scope: { tenantId: string; documentId: string } | { limit: number }): Promise<number> {
    let counted: StorageChange[];
    for (;;) {
      try {
        counted = await this.billing.takeStorageChanges(scope, async (change) => {
          const r = (await this.scripts.sdfMeterCountChange(
            this.stateKey(change.tenantId),
            this.usageKey(change.tenantId),
            this.dirtyKey,
            change.id,
            String(change.deltaBytes),
            change.tenantId,
          )) as number;
          if (r === -1) throw new NotSeeded(change.tenantId);
        });
        break;
      } catch (err) {
        // Seeded outside the transaction, which would otherwise hold a connection while the seed waits
        // for others.
        if (!(err instanceof NotSeeded)) throw err;
        await this.seed(err.tenantId);
      }
    }
    const byTenant = new Map<string, string[]>();
    for (const c of counted) byTenant.set(c.tenantId, [...(byTenant.get(c.tenantId) ?? []), `g:${c.id}`]);
    for (const [tenantId, marks] of byTenant) {
      // A mark left behind takes room and nothing else: its row is gone, so nothing looks for it again.
      await this.redis.client
        .hdel(this.usageKey(tenantId), ...marks)
        .catch((err: unknown) =>
          this.logger.warn({ msg: 'storage change marks left in Redis', tenant_id: tenantId, reason: String(err) }),
        );
    }
    return counted.length;
  }

  private async adjust(tenantId: string, periodStart: string, docs: number, bytes: number): Promise<void> {
    await this.scripts.sdfMeterAdjust(
      this.stateKey(tenantId),
      this.usageKey(tenantId),
      this.dirtyKey,
      periodStart,
      String(docs),
      String(bytes),
      tenantId,
    );
  }

  /** The current period's figures as every instance sees them (Redis), with the limits in force. */
  async snapshot(tenantId: string): Promise<UsageSnapshot> {
    for (;;) {
      const state = await this.redis.client.hgetall(this.stateKey(tenantId));
      if (!state.rpm) {
        await this.seed(tenantId);
        continue;
      }
      const now = this.clock.now();
      const sub = Number(state.ps) > 0 ? { start: new Date(Number(state.ps)), end: new Date(Number(state.pe)) } : null;
      const period = periodAt(now, sub);
      const ps = String(period.start.getTime());
      const [d, c, b] = await this.redis.client.hmget(this.usageKey(tenantId), `d:${ps}`, `c:${ps}`, 'b');
      const lim = (v: string | undefined) => (v === undefined || Number(v) === NONE ? null : Number(v));
      return {
        period,
        limits: {
          rpm: Number(state.rpm),
          documents: lim(state.docs),
          api_calls: lim(state.calls),
          storage_bytes: lim(state.bytes),
        },
        documents_uploaded: Number(d ?? 0),
        api_calls: Number(c ?? 0),
        storage_bytes: Number(b ?? 0),
      };
    }
  }

  /**
   * Writes the tenant's limits and period to Redis from PostgreSQL, and seeds the counters that Redis
   * lacks (after a restart) from the last flush and the documents table. Called on a miss and after
   * every plan change, so all instances see the new limits at once.
   */
  async seed(tenantId: string): Promise<void> {
    const tenant = await this.tenants.findById(tenantId);
    // Gone between authentication and now: nothing to hold it to.
    if (!tenant) throw AppError.notFound('Tenant');
    await this.billing.ensure(this.billing.manager, tenantId);
    const row = await this.billing.findForTenant(tenantId);
    if (!row) throw AppError.notFound('Tenant');
    const limits = effectiveLimits(await this.billing.plan(row.plan_id), row.custom, tenant.rate_limit_rpm);
    const sub =
      row.current_period_start && row.current_period_end && row.stripe_subscription_id
        ? { start: row.current_period_start, end: row.current_period_end }
        : null;
    const period = periodAt(this.clock.now(), sub);
    const ps = String(period.start.getTime());
    const [flushed, stored, seq] = await Promise.all([
      this.billing.usage(tenantId, period.start),
      this.billing.storedBytes(tenantId),
      this.billing.maxSeq(tenantId),
    ]);
    const usage = this.usageKey(tenantId);
    // Before the seeded mark (bill:) is set: no script counts into b until both are there.
    await this.scripts.sdfMeterSeedStorage(usage, String(stored.bytes), ...stored.uncounted);
    await this.redis.client
      .multi()
      .hsetnx(usage, `d:${ps}`, String(flushed?.documents_uploaded ?? 0))
      .hsetnx(usage, `c:${ps}`, String(flushed?.api_calls ?? 0))
      .hsetnx(usage, `e:${ps}`, String(period.end.getTime()))
      .hsetnx(usage, 'seq', String(seq))
      .hset(this.stateKey(tenantId), {
        rpm: String(limits.rpm),
        docs: String(limitValue(limits.documents)),
        calls: String(limitValue(limits.api_calls)),
        bytes: String(limitValue(limits.storage_bytes)),
        ps: sub ? String(sub.start.getTime()) : '0',
        pe: sub ? String(sub.end.getTime()) : '0',
      })
      .exec();
  }

  /** Tenants whose counters changed, taken off the dirty set (a change after this puts them back). */
  async takeDirty(count: number): Promise<string[]> {
    return (await this.redis.client.spop(this.dirtyKey, count)) ?? [];
  }

  async markDirty(tenantId: string): Promise<void> {
    await this.redis.client.sadd(this.dirtyKey, tenantId);
  }

  async counters(tenantId: string): Promise<Record<string, string>> {
    return this.redis.client.hgetall(this.usageKey(tenantId));
  }

  async dropClosed(tenantId: string, periodStart: string, docs: string, calls: string): Promise<void> {
    await this.scripts.sdfMeterDropClosed(this.usageKey(tenantId), periodStart, docs, calls);
  }
}
