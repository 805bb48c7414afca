import { Injectable } from '@nestjs/common';
import { RedisService } from '../redis/redis.module.js';
import { randomToken, sha256Hex } from './secrets.js';

const TICKET_TTL_SECONDS = 300;
const MAX_ATTEMPTS = 5;

export interface LoginTicket {
  userId: string;
  tenantId: string;
}

// Counts a try BEFORE its code is checked, in one step, so concurrent tries cannot outrun the count:
// the ticket answers at most MAX_ATTEMPTS tries, then dies. Returns {user, tenant} or an empty list.
const TRY = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local n = redis.call('HINCRBY', KEYS[1], 'tries', 1)
if n > tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[1])
  return {}
end
return redis.call('HMGET', KEYS[1], 'user_id', 'tenant_id')
`;

/**
 * The `session_token` of a login that still needs its TOTP code (M1): random, kept in Redis under
 * its SHA-256 for five minutes, consumed by the first successful validation, and good for five tries
 * in all (each counted before its code is checked).
 */
@Injectable()
export class LoginTickets {
  constructor(private readonly redis: RedisService) {}

  async issue(ticket: LoginTicket): Promise<string> {
    const raw = randomToken();
    const key = this.key(raw);
    await this.redis.client
      .multi()
      .hset(key, { user_id: ticket.userId, tenant_id: ticket.tenantId, tries: '0' })
      .expire(key, TICKET_TTL_SECONDS)
      .exec();
    return raw;
  }

  /** Counts one try on the ticket; null when it is unknown, expired or has had its tries. */
  async tryOnce(raw: string): Promise<LoginTicket | null> {
    const [userId, tenantId] = (await this.redis.client.eval(TRY, 1, this.key(raw), String(MAX_ATTEMPTS))) as (
      string | null
    )[];
    return userId && tenantId ? { userId, tenantId } : null;
  }

  /** True for exactly one caller: the one whose DEL removed the ticket. */
  async consume(raw: string): Promise<boolean> {
    return (await this.redis.client.del(this.key(raw))) === 1;
  }

  private key(raw: string): string {
    return this.redis.key('login-ticket', sha256Hex(raw));
  }
}
