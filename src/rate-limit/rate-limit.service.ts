import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { RedisService } from '../redis/redis.module.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  resetAt: number;
  retryAfterSeconds: number;
  /** True for exactly one rejected request per tenant per window (S11: one audit entry per window). */
  firstRejection: boolean;
}

// Fixed window on Redis time, so every API instance agrees on the window whatever its own clock says.
export const RATE_WINDOW_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local win = tonumber(ARGV[1])
local start = now - (now % win)
local key = KEYS[1] .. ':' .. start
local count = redis.call('INCR', key)
if count == 1 then redis.call('PEXPIRE', key, win + 1000) end
local first = 0
if count > tonumber(ARGV[2]) then
  if redis.call('SET', key .. ':rejected', '1', 'NX', 'PX', win + 1000) then first = 1 end
end
return {count, start + win, now, first}
`;

/** S12: per-tenant request limit, shared by all API instances through Redis. */
@Injectable()
export class RateLimitService {
  private readonly windowMs: number;

  constructor(
    private readonly redis: RedisService,
    @Inject(AppConfig) config: AppConfig,
  ) {
    this.windowMs = config.env.RATE_LIMIT_WINDOW_SECONDS * 1000;
    // EVALSHA (ioredis loads the script on first use): the script body is not sent with every request.
    this.redis.client.defineCommand('sdfRateWindow', { numberOfKeys: 1, lua: RATE_WINDOW_SCRIPT });
  }

  async consume(tenantId: string, limit: number): Promise<RateDecision> {
    const client = this.redis.client as unknown as { sdfRateWindow: (...args: string[]) => Promise<unknown> };
    const [count, resetMs, nowMs, first] = (await client.sdfRateWindow(
      this.redis.key('rl', tenantId),
      String(this.windowMs),
      String(limit),
    )) as [number, number, number, number];
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetAt: Math.ceil(resetMs / 1000),
      retryAfterSeconds: Math.max(1, Math.ceil((resetMs - nowMs) / 1000)),
      firstRejection: first === 1,
    };
  }
}
