import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { RedisService } from '../redis/redis.module.js';
import type { RateDecision } from './rate-limit.service.js';

/*
 * A token bucket per user, on Redis time (every API instance agrees whatever its own clock says):
 *   KEYS[1]  the user's bucket (hash: tk tokens left, ts last refill in ms)
 *   KEYS[2]  the tenant's "a refusal was audited this minute" mark
 *   ARGV[1]  tokens per minute, ARGV[2] the bucket's size (the burst)
 * Returns {allowed, tokens left (floor), ms until the bucket is full, ms until the next token, first refusal}.
 */
export const SESSION_BUCKET_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rpm = tonumber(ARGV[1])
local cap = tonumber(ARGV[2])
local st = redis.call('HMGET', KEYS[1], 'tk', 'ts')
local tokens = tonumber(st[1]) or cap
local ts = tonumber(st[2]) or now
if now > ts then tokens = math.min(cap, tokens + (now - ts) * rpm / 60000) end
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tk', tostring(tokens), 'ts', tostring(now))
local full = math.ceil((cap - tokens) * 60000 / rpm)
redis.call('PEXPIRE', KEYS[1], full + 1000)
local next = 0
if tokens < 1 then next = math.ceil((1 - tokens) * 60000 / rpm) end
local first = 0
if allowed == 0 and redis.call('SET', KEYS[2], '1', 'NX', 'PX', 60000) then first = 1 end
return {allowed, math.floor(tokens), full, next, now, first}
`;

/**
 * The limit of the portal's own pages: requests made with a signed-in user's session (an access token
 * that names its session) are held to a bucket of the user's own, not to the tenant's rate limit, and
 * are not counted as API calls. A person clicking through the portal makes bursts of a few requests a
 * page; a program is meant to use an API key or a tenant token, which stay metered. The bucket still
 * bounds a session token put to a program's use: beyond it 429 RATE_LIMITED with Retry-After.
 */
@Injectable()
export class SessionRateLimit {
  /** Requests a minute, sustained. */
  readonly rpm: number;
  /** The bucket's size: requests at once after a quiet spell. */
  readonly burst: number;

  constructor(
    private readonly redis: RedisService,
    @Inject(AppConfig) config: AppConfig,
  ) {
    this.rpm = config.env.SESSION_RATE_LIMIT_RPM;
    this.burst = config.env.SESSION_RATE_LIMIT_BURST;
    // EVALSHA (ioredis loads the script on first use): the script body is not sent with every request.
    this.redis.client.defineCommand('sdfSessionBucket', { numberOfKeys: 2, lua: SESSION_BUCKET_SCRIPT });
  }

  /**
   * One request of `userId` (of `tenantId`). The headers tell the bucket: its size, the requests left
   * now, and when it is full again; `firstRejection` is set once per tenant a minute (S11: one audit
   * entry per window).
   */
  async consume(tenantId: string, userId: string): Promise<RateDecision> {
    const client = this.redis.client as unknown as { sdfSessionBucket: (...args: string[]) => Promise<unknown> };
    const [allowed, left, fullMs, nextMs, nowMs, first] = (await client.sdfSessionBucket(
      this.redis.key('rl-session', tenantId, userId),
      this.redis.key('rl-session', tenantId, 'rejected'),
      String(this.rpm),
      String(this.burst),
    )) as [number, number, number, number, number, number];
    return {
      allowed: allowed === 1,
      limit: this.burst,
      remaining: Math.max(0, left),
      resetAt: Math.ceil((nowMs + fullMs) / 1000),
      retryAfterSeconds: Math.max(1, Math.ceil(nextMs / 1000)),
      firstRejection: first === 1,
    };
  }
}
