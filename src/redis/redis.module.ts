import { Global, Inject, Injectable, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Redis, type Command, type RedisOptions } from 'ioredis';
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
 * A command on the request path that Redis has not answered by then fails (the request answers 503 with
 * Retry-After): a server that keeps its connections but does not answer (stopped, frozen) holds no request
 * longer. Redis answers in well under a millisecond, so this is far above a slow answer of a busy process.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 2_500;

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
    // A server that accepts connections but does not answer (stopped) is given up on after this long.
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
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
  private probe: NodeJS.Timeout | undefined;

  /** Whether this process sees Redis as away now. */
  get down(): boolean {
    return this.downSince !== null;
  }

  /**
   * A command of the primary connection settled. A time-out on a connection that stays open (the server
   * was stopped or froze) is an outage as much as a lost connection, and is said the same way; its end is
   * the next answer, which `ping` asks for each second in case nothing else does.
   */
  settled(err: unknown, ping: () => Promise<unknown>): void {
    if (err === undefined) return this.answered();
    if (!(err instanceof Error) || err.message !== 'Command timed out' || this.downSince !== null) return;
    this.failed(err);
    const next = () => {
      this.probe = setTimeout(() => {
        if (this.downSince === null) return;
        ping().then(
          () => this.answered(),
          () => next(),
        );
      }, 1_000);
      this.probe.unref();
    };
    next();
  }

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
    clearTimeout(this.probe);
    this.logger.log({ msg: 'Redis answers again', outage_ms: Date.now() - this.downSince });
    this.downSince = null;
  }
}

function describe(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? `${e.code}: ` : '';
  return `${code}${typeof e?.message === 'string' ? e.message : String(err)}`.slice(0, 300);
}

/** A client whose every command's outcome reaches the outage log (a command time-out starts an outage). */
class WatchedRedis extends Redis {
  private readonly watched = new WeakSet<Command>();

  constructor(
    options: RedisOptions,
    private readonly outages: RedisOutageLog,
  ) {
    super(options);
  }

  override sendCommand(command: Command, stream?: Parameters<Redis['sendCommand']>[1]): unknown {
    const sent = super.sendCommand(command, stream);
    // A command queued offline passes here again when it is sent: watched once.
    if (!this.watched.has(command)) {
      this.watched.add(command);
      command.promise.then(
        () => this.outages.settled(undefined, () => this.ping()),
        (err: unknown) => this.outages.settled(err, () => this.ping()),
      );
    }
    return sent;
  }
}

/** The shared Redis client for counters and checks; every key goes under REDIS_PREFIX. */
@Injectable()
export class RedisService implements OnApplicationShutdown {
  readonly client: Redis;
  readonly prefix: string;
  readonly outages = new RedisOutageLog();

  constructor(@Inject(AppConfig) config: AppConfig) {
    this.client = new WatchedRedis(
      { ...requestPathRedisOptions(config.env.REDIS_URL), lazyConnect: false },
      this.outages,
    );
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
