import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { AppError } from '../common/errors.js';
import { RedisService } from '../redis/redis.module.js';
import { sha256Hex } from './secrets.js';

// Fixed windows on Redis's clock, so every API instance counts together. Returns, per key, the
// count of the current window and the milliseconds until it ends.
const PEEK = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local win = tonumber(ARGV[1])
local start = now - (now % win)
local out = {}
for i, k in ipairs(KEYS) do
  out[i] = tonumber(redis.call('GET', k .. ':' .. start) or '0')
end
out[#KEYS + 1] = start + win - now
return out
`;
const RECORD = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local win = tonumber(ARGV[1])
for i, k in ipairs(KEYS) do
  local key = k .. ':' .. (now - (now % win))
  if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, win + 1000) end
end
return 1
`;

/**
 * M1: failed logins counted per account and per client address. Past either limit, login answers
 * 429 with Retry-After before any password is checked. Keys of its own (`login-fail:*`), apart from
 * the authentication step's per-address counter of bad credentials.
 */
@Injectable()
export class LoginThrottle {
  private readonly windowMs: number;

  constructor(
    private readonly redis: RedisService,
    @Inject(AppConfig) private readonly config: AppConfig,
  ) {
    this.windowMs = config.env.LOGIN_FAILURE_WINDOW_SECONDS * 1000;
  }

  async assertAllowed(email: string, address: string): Promise<void> {
    const [account, client, msLeft] = (await this.redis.client.eval(
      PEEK,
      2,
      this.accountKey(email),
      this.addressKey(address),
      String(this.windowMs),
    )) as [number, number, number];
    const env = this.config.env;
    if (account < env.LOGIN_FAILURE_LIMIT_PER_ACCOUNT && client < env.LOGIN_FAILURE_LIMIT_PER_ADDRESS) return;
    const error = AppError.of('RATE_LIMITED', 'Too many failed logins; try again later');
    throw new AppError(error.status, error.code, error.message, [], {
      'Retry-After': String(Math.max(1, Math.ceil(msLeft / 1000))),
    });
  }

  async recordFailure(email: string, address: string): Promise<void> {
    await this.redis.client.eval(RECORD, 2, this.accountKey(email), this.addressKey(address), String(this.windowMs));
  }

  // The address is hashed: the key names no one in clear.
  private accountKey(email: string): string {
    return this.redis.key('login-fail', 'account', sha256Hex(email));
  }

  private addressKey(address: string): string {
    return this.redis.key('login-fail', 'address', address);
  }
}
