import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { RedisService } from '../redis/redis.module.js';

// One try of a TOTP code on an account, counted before the code is checked (so concurrent tries across
// several login tickets cannot outrun the count). While a backoff runs, the try is refused: {0, ms left}.
// Otherwise {1, tries so far}; past FREE tries each further one starts a doubling backoff.
const TRY = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local untilMs = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if now < untilMs then return {0, untilMs - now} end
local n = redis.call('HINCRBY', KEYS[1], 'tries', 1)
local free = tonumber(ARGV[1])
if n > free then
  local wait = math.min(tonumber(ARGV[2]) * (2 ^ (n - free - 1)), tonumber(ARGV[3]))
  redis.call('HSET', KEYS[1], 'until', now + wait)
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
return {1, n}
`;

/** Wrong codes tried without a backoff; from the next one, each try waits twice as long as the last. */
const FREE_TRIES = 3;
/** The count of an account is forgotten a day after its last try. */
const MEMORY_MS = 24 * 60 * 60 * 1000;

export type TotpTry = { allowed: true; tries: number } | { allowed: false; retryAfterMs: number };

/**
 * TOTP tries per account, across login tickets: a correct password must not buy a fresh set of guesses.
 * A 6-digit code falls to about 10^6 tries, so every try counts; three are free, then each waits for a
 * doubling backoff, and TOTP_LOCK_AFTER wrong ones lock the second factor (`users.totp_locked_at`) until a
 * recovery code lifts it. A right code forgets the count.
 */
@Injectable()
export class TotpAttempts {
  private readonly script: (...args: string[]) => Promise<unknown>;

  constructor(
    private readonly redis: RedisService,
    @Inject(AppConfig) private readonly config: AppConfig,
  ) {
    this.script = redis.script('sdfTotpTry', 1, TRY);
  }

  get lockAfter(): number {
    return this.config.env.TOTP_LOCK_AFTER;
  }

  async begin(userId: string): Promise<TotpTry> {
    const env = this.config.env;
    const [allowed, value] = (await this.script(
      this.key(userId),
      String(FREE_TRIES),
      String(env.TOTP_BACKOFF_BASE_MS),
      String(env.TOTP_BACKOFF_MAX_MS),
      String(MEMORY_MS),
    )) as [number, number];
    return allowed === 1 ? { allowed: true, tries: value } : { allowed: false, retryAfterMs: value };
  }

  async forget(userId: string): Promise<void> {
    await this.redis.client.del(this.key(userId));
  }

  private key(userId: string): string {
    return this.redis.key('totp-tries', userId);
  }
}
