import { Global, Inject, Injectable, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
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

/**
 * Options of a connection that requests wait on (counters, checks, enqueues from the API): while Redis is
 * away a command fails within a few seconds (the request answers 503) instead of waiting in ioredis's
 * offline queue until Redis returns, which held requests until the HTTP idle time-out cut them.
 */
export function requestPathRedisOptions(url: string): RedisOptions {
  return {
    ...redisOptions(url),
    // A command waits through one reconnection attempt, then fails ("Reached the max retries per request limit").
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 200, 1_000),
    // A server that accepts connections but does not answer (stopped) is given up on after this long;
    // generous, so that a process starved of CPU does not take its own slowness for an outage.
    commandTimeout: 10_000,
  };
}

/**
 * One JSON line when Redis stops answering and one when it answers again, however many connections
 * (requests, queues, workers) notice: ioredis otherwise prints "Unhandled error event" with a stack for
 * every failed reconnection of every connection, hundreds of lines a minute and none of them JSON.
 */
export class RedisOutageLog {
  private readonly logger = new Logger('Redis');
  private downSince: number | null = null;
  private lastOther = 0;

  /** The connection whose state is the process's view of Redis (the request-path client). */
  watchPrimary(client: Redis): void {
    client.on('error', (err: unknown) => this.failed(err));
    client.on('ready', () => this.answered());
  }

  /** Other connections (queues, workers): their errors during an outage are the same outage, said once. */
  watch(emitter: { on(event: 'error', listener: (err: Error) => void): unknown }): void {
    emitter.on('error', (err) => this.failed(err, true));
  }

  private failed(err: unknown, secondary = false): void {
    if (this.downSince !== null) return;
    if (secondary) {
      // A queue's error while the primary connection is fine: said at most once a minute.
      const now = Date.now();
      if (now - this.lastOther < 60_000) return;
      this.lastOther = now;
      this.logger.warn({ msg: 'a queue connection reported an error', reason: describe(err) });
      return;
    }
    this.downSince = Date.now();
    this.logger.warn({
      msg: 'Redis is unreachable: requests that need it answer 503, jobs wait; reconnecting',
      reason: describe(err),
    });
  }

  private answered(): void {
    if (this.downSince === null) return;
    this.logger.log({ msg: 'Redis answers again', outage_ms: Date.now() - this.downSince });
    this.downSince = null;
  }
}

function describe(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? `${e.code}: ` : '';
  return `${code}${typeof e?.message === 'string' ? e.message : String(err)}`.slice(0, 300);
}

/** The shared Redis client for counters and checks; every key goes under REDIS_PREFIX. */
@Injectable()
export class RedisService implements OnApplicationShutdown {
  readonly client: Redis;
  readonly prefix: string;
  readonly outages = new RedisOutageLog();

  constructor(@Inject(AppConfig) config: AppConfig) {
    this.client = new Redis({ ...requestPathRedisOptions(config.env.REDIS_URL), lazyConnect: false });
    this.outages.watchPrimary(this.client);
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
