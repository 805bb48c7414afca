import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { RedisService } from '../redis/redis.module.js';
import { TOKEN_SKEW_SECONDS } from './tokens.js';

/**
 * Revoked sessions, as the authentication step sees them: access tokens are stateless, so a Redis
 * entry per revoked session makes its tokens fail at once. An entry lives as long as any access token
 * of that session can (the access token lifetime plus the tolerated skew), then expires by itself.
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

  async revoke(sessionIds: readonly string[]): Promise<void> {
    if (sessionIds.length === 0) return;
    const pipeline = this.redis.client.pipeline();
    for (const id of sessionIds) pipeline.set(this.key(id), '1', 'EX', this.ttlSeconds);
    const results = await pipeline.exec();
    const failed = results?.find(([err]) => err);
    if (failed) throw failed[0] as Error;
  }

  async isRevoked(sessionId: string): Promise<boolean> {
    return (await this.redis.client.exists(this.key(sessionId))) === 1;
  }

  private key(sessionId: string): string {
    return this.redis.key('session-revoked', sessionId);
  }
}
