import type { CacheItem, CacheProvider } from '@node-saml/node-saml';
import type { RedisService } from '../redis/redis.module.js';

/**
 * C1: the outstanding AuthnRequest ids of one tenant, in Redis so every API process sees them and
 * another tenant's id is simply unknown here. Each lives as long as a login may take.
 */
export class RedisRequestCache implements CacheProvider {
  constructor(
    private readonly redis: RedisService,
    private readonly tenantId: string,
    private readonly ttlMs: number,
  ) {}

  private k(id: string): string {
    return this.redis.key('saml', 'req', this.tenantId, id);
  }

  async saveAsync(key: string, value: string): Promise<CacheItem | null> {
    const ok = await this.redis.client.set(this.k(key), value, 'PX', this.ttlMs, 'NX');
    return ok ? { value, createdAt: Date.now() } : null;
  }

  async getAsync(key: string): Promise<string | null> {
    return this.redis.client.get(this.k(key));
  }

  async removeAsync(key: string | null): Promise<string | null> {
    if (!key) return null;
    const n = await this.redis.client.del(this.k(key));
    return n > 0 ? key : null;
  }
}
