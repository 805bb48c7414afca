import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Redis, type RedisOptions } from 'ioredis';
import { AppConfig } from '../config/app-config.js';

/** ioredis options from a redis:// URL; BullMQ needs `maxRetriesPerRequest: null` on its connections. */
export function redisOptions(url: string): RedisOptions {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0,
    tls: u.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
  };
}

/** The shared Redis client for counters and checks; every key goes under REDIS_PREFIX. */
@Injectable()
export class RedisService implements OnApplicationShutdown {
  readonly client: Redis;
  readonly prefix: string;

  constructor(@Inject(AppConfig) config: AppConfig) {
    this.client = new Redis({ ...redisOptions(config.env.REDIS_URL), lazyConnect: false });
    this.prefix = config.env.REDIS_PREFIX;
  }

  key(...parts: string[]): string {
    return [this.prefix, ...parts].join(':');
  }

  /**
   * A Lua script called by its SHA-1 (EVALSHA; ioredis loads it on first use), so scripts on the request
   * and job paths do not send their text with every call.
   */
  script(name: string, numberOfKeys: number, lua: string): (...args: string[]) => Promise<unknown> {
    const commands = this.client as unknown as Record<string, (...args: string[]) => Promise<unknown>>;
    if (typeof commands[name] !== 'function') this.client.defineCommand(name, { numberOfKeys, lua });
    return (...args) => commands[name]!(...args);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}

@Global()
@Module({ providers: [RedisService], exports: [RedisService] })
export class RedisModule {}
