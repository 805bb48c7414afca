import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { RedisService } from '../redis/redis.module.js';
import { TOKEN_SKEW_SECONDS } from './tokens.js';

/**
 * Revoked sessions, as the authentication step sees them: access tokens are stateless, so a Redis
 * entry per revoked session makes its tokens fail from the moment it holds (epoch milliseconds; an
 * entry of `1` from an older release holds at once). An entry lives as long as any access token of that
 * session can (the access token lifetime plus the tolerated skew), then expires by itself.
 */
@Injectable()
export class SessionRevocations {
  private readonly ttlSeconds: number;

  constructor(
    private readonly redis: RedisService,
    @Inject(AppConfig) config: AppConfig,
  ) {
    this.ttlSeconds = config.tenantTokenTtlSeconds + TOKEN_SKEW_SECONDS;
  }

  /**
   * Ends these sessions' access tokens, at once or `graceMs` from now: a cookie renewal's predecessor keeps
   * its access tokens for the repeat window, so a request another tab sent with one moments before the
   * rotation is still answered (see SessionsService.refresh).
   */
  async revoke(sessionIds: readonly string[], graceMs = 0): Promise<void> {
    if (sessionIds.length === 0) return;
    const from = String(graceMs > 0 ? Date.now() + graceMs : 0);
    const pipeline = this.redis.client.pipeline();
    for (const id of sessionIds) pipeline.set(this.key(id), from, 'EX', this.ttlSeconds);
    const results = await pipeline.exec();
    const failed = results?.find(([err]) => err);
    if (failed) throw failed[0] as Error;
  }

  async isRevoked(sessionId: string): Promise<boolean> {
    const from = await this.redis.client.get(this.key(sessionId));
    return from !== null && !(Number(from) > Date.now());
  }

  private key(sessionId: string): string {
    return this.redis.key('session-revoked', sessionId);
  }
}
