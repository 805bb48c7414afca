import { Injectable } from '@nestjs/common';
import { RedisService } from '../redis/redis.module.js';
import { randomToken, sha256Hex } from './secrets.js';

const TICKET_TTL_SECONDS = 300;
const MAX_ATTEMPTS = 5;

export interface LoginTicket {
  userId: string;
  tenantId: string;
}

// Counts a wrong code; the ticket dies after MAX_ATTEMPTS of them.
const FAIL = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local n = redis.call('HINCRBY', KEYS[1], 'failures', 1)
if n >= tonumber(ARGV[1]) then redis.call('DEL', KEYS[1]) end
return n
`;

/**
 * The `session_token` of a login that still needs its TOTP code (M1): random, kept in Redis under
 * its SHA-256 for five minutes, consumed by the first successful validation, and dropped after five
 * wrong codes.
 */
@Injectable()
export class LoginTickets {
  constructor(private readonly redis: RedisService) {}

  async issue(ticket: LoginTicket): Promise<string> {
    const raw = randomToken();
    const key = this.key(raw);
    await this.redis.client
      .multi()
      .hset(key, { user_id: ticket.userId, tenant_id: ticket.tenantId, failures: '0' })
      .expire(key, TICKET_TTL_SECONDS)
      .exec();
    return raw;
  }

  async peek(raw: string): Promise<LoginTicket | null> {
    const data = await this.redis.client.hgetall(this.key(raw));
    return data.user_id && data.tenant_id ? { userId: data.user_id, tenantId: data.tenant_id } : null;
  }

  /** True for exactly one caller: the one whose DEL removed the ticket. */
  async consume(raw: string): Promise<boolean> {
    return (await this.redis.client.del(this.key(raw))) === 1;
  }

  async recordFailure(raw: string): Promise<void> {
    await this.redis.client.eval(FAIL, 1, this.key(raw), String(MAX_ATTEMPTS));
  }

  private key(raw: string): string {
    return this.redis.key('login-ticket', sha256Hex(raw));
  }
}
