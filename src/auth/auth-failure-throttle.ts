import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { AppError } from '../common/errors.js';
import { RedisService } from '../redis/redis.module.js';

// Fixed windows on Redis's clock (as the tenant rate limit), so every API instance counts together.
const PEEK = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local win = tonumber(ARGV[1])
local start = now - (now % win)
local count = tonumber(redis.call('GET', KEYS[1] .. ':' .. start) or '0')
return {count, start + win - now}
`;
const RECORD = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local win = tonumber(ARGV[1])
local key = KEYS[1] .. ':' .. (now - (now % win))
if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, win + 1000) end
return 1
`;

/**
 * Failed authentication, counted per client address: past AUTH_FAILURE_LIMIT failures in a window,
 * that address is answered 429 (with Retry-After) before any credential is looked at, so guessing
 * keys or tokens costs the guesser time and the database nothing.
 */
@Injectable()
export class AuthFailureThrottle {
  private readonly windowMs: number;
  private readonly limit: number;
  private readonly peek: (...args: string[]) => Promise<unknown>;
  private readonly record: (...args: string[]) => Promise<unknown>;

  constructor(
    private readonly redis: RedisService,
    @Inject(AppConfig) config: AppConfig,
  ) {
    this.windowMs = config.env.AUTH_FAILURE_WINDOW_SECONDS * 1000;
    this.limit = config.env.AUTH_FAILURE_LIMIT;
    this.peek = redis.script('sdfAuthFailurePeek', 1, PEEK);
    this.record = redis.script('sdfAuthFailureRecord', 1, RECORD);
  }

  async assertAllowed(address: string): Promise<void> {
    const [count, msLeft] = (await this.peek(this.key(address), String(this.windowMs))) as [number, number];
    if (count < this.limit) return;
    const error = AppError.of('RATE_LIMITED', 'Too many failed authentication attempts from this address');
    throw new AppError(error.status, error.code, error.message, [], {
      'Retry-After': String(Math.max(1, Math.ceil(msLeft / 1000))),
    });
  }

  async recordFailure(address: string): Promise<void> {
    await this.record(this.key(address), String(this.windowMs));
  }

  private key(address: string): string {
    return this.redis.key('authfail', address);
  }
}
