import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { AppError } from '../common/errors.js';
import { SHUTDOWN_BEGINS } from '../common/graceful-shutdown.js';
import { requestContext } from '../common/request-context.js';
import { AppConfig } from '../config/app-config.js';
import type { EventName, EventPayload } from './events.js';

/** Every insert into the outbox notifies this (migration EventStream): wakes the sequencers. */
const NEW_CHANNEL = 'outbox_events_new';
/** The sequencer notifies this with the highest number it gave: wakes the readers. */
const SEQ_CHANNEL = 'outbox_events_seq';
/** The link's `application_name` (pg_stat_activity shows which connection carries the live events). */
export const LINK_NAME = 'sdf-event-stream';
const SEQUENCE_BATCH = 1000;
const READ_BATCH = 500;
/** A pass even without a notification (a lost listener costs this much latency at most). */
const TICK_MS = 1000;
/** A sequencer that found the lock taken tries again this soon (the holder may have missed our rows). */
const LOCK_RETRY_MS = 25;
const RELISTEN_DELAY_MS = 2000;
/** A catching-up stream whose client does not drain its output within this long is cut. */
const DRAIN_TIMEOUT_MS = 30_000;
/** What a client waits before reconnecting (the `retry:` field sent on connect). */
export const RECONNECT_MS = 2000;
/**
 * How long a process's row in `event_stream_presence` holds (migration EventStreamPresence), and how often
 * it is renewed while streams are open: the outbox's inserts wake the numbering only while such a row holds.
 */
const PRESENCE_HOLDS_S = 30;
const PRESENCE_RENEW_MS = 10_000;

interface StreamRow {
  seq: string;
  tenant_id: string;
  event: EventName;
  payload: EventPayload;
}

export interface StreamFilter {
  types: ReadonlySet<EventName> | null;
  /** A document's record id (`data.id` of its events). */
  document: string | null;
}

/** One open stream. `cursor`: the number of the last event written to it (or skipped as not its own). */
class Connection {
  readonly id = randomUUID();
  cursor = 0;
  /** Caught up: the live events of the process are written to it as they are read. */
  live = false;
  closed = false;

  constructor(
    readonly tenantId: string,
    readonly filter: StreamFilter,
    readonly res: Response,
    private readonly maxBuffer: number,
    private readonly onClose: (c: Connection) => void,
  ) {}

  wants(row: StreamRow): boolean {
    if (this.filter.types && !this.filter.types.has(row.event)) return false;
    return this.filter.document === null || row.payload.data?.id === this.filter.document;
  }

  /**
   * Writes; a client whose unsent output is already past the buffer bound when more comes is cut (it
   * resumes with the last id it read). Judged before the write, not after: one batch larger than the bound
   * (many events numbered at once) is not a client falling behind, so a stream holds at most the bound and
   * one batch. `bounded` false: the caller waits for the output to drain before writing more (catching up
   * from the table).
   */
  write(chunk: string | Buffer, bounded = true): boolean {
    if (this.closed) return false;
    if (bounded && this.res.writableLength > this.maxBuffer) {
      this.cut();
      return false;
    }
    return this.res.write(chunk);
  }

  /** Ends the stream at once, without waiting for unsent output. */
  cut(): void {
    if (this.closed) return;
    this.close();
    this.res.destroy();
  }

  /** Ends the stream cleanly (the client reconnects after `retry`). */
  end(): void {
    if (this.closed) return;
    this.close();
    this.res.end();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose(this);
  }
}

/** One event as the stream writes it: `id`, `event` and the webhook's body as `data`. */
export function frame(seq: string | number, event: string, body: string): string {
  return `id: ${seq}\nevent: ${event}\ndata: ${body}\n\n`;
}

/**
 * The tenant's document events as Server-Sent Events (GET /events), read from the outbox the webhooks
 * use. The order and the ids come from the table: each event gets a number (`seq`) once its transaction
 * committed, from one sequencing transaction at a time across all processes, so a number becomes visible
 * only after every smaller one; a reader that saw N has every committed event up to N, and resuming
 * "after N" loses nothing and repeats nothing.
 *
 * Each API process keeps one connection of its own (the link): it LISTENs there, and numbers and reads
 * the live events there, so an event never waits for the pool the requests share. While a stream is open
 * on any instance, an insert anywhere wakes the sequencers (otherwise the tick numbers); numbering is one
 * statement (the function `outbox_events_sequence`), which returns the rows it numbered, and the process
 * that numbered them writes them to its streams at once. Its
 * notification wakes every other process's reader, which reads the new rows once for all its streams and
 * writes each to the streams of its tenant. A notification only wakes; what is written is what the table
 * holds. Without the link (lost, being made again) the same statements go through the pool.
 */
@Injectable()
export class EventStream implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(EventStream.name);
  private readonly connections = new Set<Connection>();
  private readonly byTenant = new Map<string, Set<Connection>>();
  /** The highest number read from the table by this process (every event up to it is written). */
  private head = 0;
  /** Whether `head` was read from the table since the process started. */
  private headKnown = false;
  private listener: pg.Client | undefined;
  /** The listener once it listens: the live path's statements run on it, one after another. */
  private link: pg.Client | undefined;
  private linkQueue: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private tick: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private sequencing: Promise<void> | undefined;
  private sequenceAgain = false;
  /** The highest number notified while this process was numbering (0: none). */
  private numberedMeanwhile = 0;
  private reading: Promise<void> | undefined;
  private readAgain = false;
  /** This process's row in `event_stream_presence`, and when it was last written (0: not present). */
  private readonly processId = randomUUID();
  private presentSince = 0;
  private withdrawing: Promise<void> = Promise.resolve();

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly config: AppConfig,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onApplicationBootstrap(): void {
    void this.listen();
    this.tick = setInterval(() => {
      this.announce();
      this.wakeSequencer();
      this.wakeReader();
    }, TICK_MS);
    this.tick.unref();
    this.heartbeat = setInterval(() => this.beat(), this.config.env.EVENTS_HEARTBEAT_MS);
    this.heartbeat.unref();
    const server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    // A process that stops ends its streams at once: their clients reconnect (to another instance).
    server?.on(SHUTDOWN_BEGINS, () => this.endAll());
  }

  beforeApplicationShutdown(): void {
    this.endAll();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.tick);
    clearInterval(this.heartbeat);
    await this.withdraw();
    await this.listener?.end().catch(() => undefined);
    await Promise.all([this.sequencing, this.reading]);
  }

  /** How many streams this process holds (all, or one tenant's). */
  open(tenantId?: string): number {
    return tenantId === undefined ? this.connections.size : (this.byTenant.get(tenantId)?.size ?? 0);
  }

  /**
   * Refuses a stream beyond the bounds (429), before anything is written. Called in the request, before
   * `attach`; nothing is awaited between the two, so no two requests pass the same last place.
   */
  admit(tenantId: string): void {
    const env = this.config.env;
    if (this.connections.size >= env.EVENTS_MAX_PER_PROCESS) {
      throw tooManyStreams(
        `This server holds its maximum of ${env.EVENTS_MAX_PER_PROCESS} event streams; try again shortly`,
        '/connections',
        `must be at most ${env.EVENTS_MAX_PER_PROCESS} on one server`,
      );
    }
    if (this.open(tenantId) >= env.EVENTS_MAX_PER_TENANT) {
      throw tooManyStreams(
        `At most ${env.EVENTS_MAX_PER_TENANT} event streams may be open at once for this tenant; close one first`,
        '/connections',
        `must be at most ${env.EVENTS_MAX_PER_TENANT} per tenant`,
      );
    }
  }

  /**
   * Opens a stream on `res` for the tenant: headers, `retry`, then the events after `lastEventId` (or, with
   * none, the events from now on). Runs in the request's context, so the catch-up reads see this tenant's
   * rows alone.
   */
  async attach(tenantId: string, filter: StreamFilter, res: Response, lastEventId: number | null): Promise<void> {
    this.admit(tenantId);
    const conn = new Connection(tenantId, filter, res, this.config.env.EVENTS_MAX_BUFFER_BYTES, (c) => this.detach(c));
    this.connections.add(conn);
    let tenantSet = this.byTenant.get(tenantId);
    if (!tenantSet) this.byTenant.set(tenantId, (tenantSet = new Set()));
    tenantSet.add(conn);
    res.once('close', () => conn.close());
    this.announce();

    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('X-Accel-Buffering', 'no');
    res.setHeader('Connection', 'keep-alive');
    // The heartbeat keeps the connection busy: the server's idle time-out does not apply to a stream.
    res.req.socket.setTimeout(0);
    res.req.socket.setNoDelay(true);
    res.flushHeaders();
    conn.write(`retry: ${RECONNECT_MS}\n\n`);
    // Events committed while no stream was open here may wait for the tick to be numbered: not now.
    this.wakeSequencer();
    try {
      await this.knownHead();
      await this.catchUp(conn, lastEventId);
    } catch (err) {
      if (!conn.closed) {
        this.logger.warn({ msg: 'event stream: catching up failed; the client resumes', error: String(err) });
        conn.cut();
      }
    }
  }

  private detach(conn: Connection): void {
    this.connections.delete(conn);
    const set = this.byTenant.get(conn.tenantId);
    set?.delete(conn);
    if (set?.size === 0) this.byTenant.delete(conn.tenantId);
    if (this.connections.size === 0) void this.withdraw();
  }

  /**
   * While streams are open here, keeps this process's row in `event_stream_presence`, so the outbox's
   * inserts wake the numbering at once (written when the first stream opens, renewed on the tick). Rows
   * long expired (of processes that died) go in the same statement.
   */
  private announce(): void {
    if (this.stopped || this.connections.size === 0) return;
    if (this.presentSince !== 0 && Date.now() - this.presentSince < PRESENCE_RENEW_MS) return;
    this.presentSince = Date.now();
    this.live(
      `WITH expired AS (DELETE FROM event_stream_presence WHERE until < now() - interval '1 hour')
       INSERT INTO event_stream_presence (process_id, until) VALUES ($1, now() + make_interval(secs => $2))
       ON CONFLICT (process_id) DO UPDATE SET until = EXCLUDED.until`,
      [this.processId, PRESENCE_HOLDS_S],
    ).catch((err: unknown) => {
      this.presentSince = 0;
      this.logger.warn({ msg: 'event stream: could not say streams are open here; will retry', error: String(err) });
    });
  }

  /**
   * The last stream here closed (or the process stops): the inserts need not wake anyone on its account.
   * A row that cannot be deleted expires by itself.
   */
  private withdraw(): Promise<void> {
    if (this.presentSince !== 0) {
      this.presentSince = 0;
      this.withdrawing = this.live(`DELETE FROM event_stream_presence WHERE process_id = $1`, [this.processId]).then(
        () => undefined,
        () => undefined,
      );
    }
    return this.withdrawing;
  }

  /** Writes the stored events after `after` (or starts at the head), then hands the stream to the live reader. */
  private async catchUp(conn: Connection, after: number | null): Promise<void> {
    if (after === null) {
      conn.cursor = this.head;
      conn.live = true;
      return;
    }
    conn.cursor = after;
    const bounds = await this.bounds(conn);
    if (after < bounds.oldest - 1 || after > bounds.newest) {
      // Older than what the outbox keeps (or unknown to it): say so and restart where the stored events begin.
      const restart = after > bounds.newest ? bounds.newest : bounds.oldest - 1;
      const reason =
        after > bounds.newest
          ? `event ${after} is unknown to this service; the stream restarts after its latest event`
          : `events after ${after} are past the retention window; the stream restarts at the oldest event kept`;
      conn.cursor = restart;
      conn.write(frame(restart, 'stream.restarted', JSON.stringify({ reason, resumed_from: restart })));
    }
    for (;;) {
      if (conn.closed) return;
      const target = this.head;
      if (target > conn.cursor) {
        const rows = await this.readTenant(conn, target);
        for (const row of rows) {
          const flushed = conn.write(frame(row.seq, row.event, JSON.stringify(row.payload)), false);
          conn.cursor = Number(row.seq);
          if (conn.closed) return;
          if (!flushed) await drained(conn.res);
        }
        if (rows.length === READ_BATCH) continue;
        conn.cursor = Math.max(conn.cursor, target);
      }
      // Nothing is awaited from this check on: the live reader takes over exactly after `target`.
      if (this.head === target || this.head <= conn.cursor) {
        conn.live = true;
        return;
      }
    }
  }

  /** The oldest and newest numbers the outbox holds, over every tenant (no tenant named). */
  private bounds(conn: Connection): Promise<{ oldest: number; newest: number }> {
    return requestContext.run({ requestId: `events-${conn.id}` }, async () => {
      const [row] = (await this.ds.query(
        `SELECT (SELECT min(seq) FROM outbox_events) AS oldest, (SELECT max(seq) FROM outbox_events) AS newest`,
      )) as { oldest: string | null; newest: string | null }[];
      // An empty outbox: nothing is kept before the newest number given (none: 0).
      const newest = row.newest === null ? await this.lastNumber() : Number(row.newest);
      return { oldest: row.oldest === null ? newest + 1 : Number(row.oldest), newest };
    });
  }

  private async lastNumber(): Promise<number> {
    const [row] = (await this.ds.query(`SELECT last_value, is_called FROM outbox_events_seq`)) as {
      last_value: string;
      is_called: boolean;
    }[];
    return row.is_called ? Number(row.last_value) : 0;
  }

  private async readTenant(conn: Connection, upTo: number): Promise<StreamRow[]> {
    const params: unknown[] = [conn.tenantId, conn.cursor, upTo, READ_BATCH];
    let where = '';
    if (conn.filter.types) {
      params.push([...conn.filter.types]);
      where += ` AND event = ANY($${params.length}::text[])`;
    }
    if (conn.filter.document) {
      params.push(conn.filter.document);
      where += ` AND payload->'data'->>'id' = $${params.length}`;
    }
    return (await this.ds.query(
      `SELECT seq, tenant_id, event, payload FROM outbox_events
        WHERE tenant_id = $1 AND seq > $2 AND seq <= $3${where}
        ORDER BY seq LIMIT $4`,
      params,
    )) as StreamRow[];
  }

  private beat(): void {
    // A stream catching up is busy writing (and waits for its client to read): it needs no heartbeat.
    for (const conn of this.connections) if (conn.live) conn.write(': heartbeat\n\n');
  }

  private endAll(): void {
    for (const conn of [...this.connections]) conn.end();
  }

  /** LISTEN on a connection of its own; a lost one is re-made, the tick covering the gap. */
  private async listen(): Promise<void> {
    if (this.stopped) return;
    const role = this.config.env.DATABASE_APP_ROLE;
    // Acts as the service's role, as the pool's connections do; it names no tenant (it reads for all).
    const client = new pg.Client({
      connectionString: this.config.env.DATABASE_URL,
      application_name: LINK_NAME,
      ...(role ? { options: `-c role=${role}` } : {}),
    });
    this.listener = client;
    let retried = false;
    const relisten = (err?: Error) => {
      if (retried || this.stopped) return;
      retried = true;
      if (this.link === client) this.link = undefined;
      if (err) this.logger.warn({ msg: 'event stream listener lost; polling meanwhile', error: err.message });
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      setTimeout(() => void this.listen(), RELISTEN_DELAY_MS).unref();
    };
    client.on('notification', (n) => (n.channel === NEW_CHANNEL ? this.newEvents() : this.numbered(n.payload)));
    client.on('error', relisten);
    client.on('end', () => relisten());
    try {
      await client.connect();
      await client.query(`LISTEN ${NEW_CHANNEL}; LISTEN ${SEQ_CHANNEL}`);
      if (!retried) this.link = client;
      this.wakeSequencer();
      this.wakeReader();
    } catch (err) {
      relisten(err as Error);
    }
  }

  /**
   * Events were committed somewhere. The inserts notify only while some process holds streams (its row in
   * `event_stream_presence`, see `announce`). A process with streams open numbers them at once; one without
   * leaves them to its next tick, when one transaction numbers all that came meanwhile: at a hundred
   * uploads a second that is one numbering a second instead of two hundred, and a process that holds
   * streams (on any instance) still numbers each event as it comes. A stream that opens writes its
   * process's row and wakes the sequencer itself.
   */
  private newEvents(): void {
    if (this.connections.size > 0) this.wakeSequencer();
  }

  /**
   * The sequencer (of any process) numbered events up to `payload`. With no stream open here, nothing is to
   * be written: the head moves to it without reading the table (every number up to it is committed).
   */
  private numbered(payload: string | undefined): void {
    const last = Number(payload);
    // This process numbered them itself and has written them already.
    if (this.headKnown && Number.isSafeInteger(last) && last <= this.head) return;
    // Its own numbering's notification comes before the statement's answer: the answer decides.
    if (this.sequencing) {
      this.numberedMeanwhile = Math.max(this.numberedMeanwhile, Number.isSafeInteger(last) ? last : Infinity);
      return;
    }
    if (this.connections.size === 0 && this.headKnown && !this.reading && Number.isSafeInteger(last)) {
      this.head = Math.max(this.head, last);
      return;
    }
    this.wakeReader();
  }

  private wakeSequencer(): void {
    if (this.stopped) return;
    if (this.sequencing) {
      this.sequenceAgain = true;
      return;
    }
    this.sequencing = (async () => {
      do {
        this.sequenceAgain = false;
        try {
          const n = await this.sequence().finally(() => {
            // Numbers another process gave meanwhile, or this one's that it could not write at once.
            if (this.numberedMeanwhile > this.head) this.wakeReader();
            this.numberedMeanwhile = 0;
          });
          if (n === SEQUENCE_BATCH) this.sequenceAgain = true;
          if (n < 0) {
            await new Promise((r) => setTimeout(r, LOCK_RETRY_MS));
            this.sequenceAgain = true;
          }
        } catch (err) {
          this.logger.warn({ msg: 'event stream: numbering events failed; will retry', error: String(err) });
        }
      } while (this.sequenceAgain && !this.stopped);
    })().finally(() => (this.sequencing = undefined));
  }

  /**
   * Numbers the committed events that have no number yet, in the order they were written, under the
   * advisory lock (one numbering at a time in the whole cluster), and notifies the readers: one statement,
   * `outbox_events_sequence` (migration EventSequencerFunction). The rows it numbered are written to this
   * process's streams at once. Returns how many it numbered, or -1 when another process holds the lock.
   */
  async sequence(): Promise<number> {
    const rows = await this.live<StreamRow & { seq: string | null }>(
      `SELECT out_seq AS seq, out_tenant AS tenant_id, out_event AS event, out_payload AS payload
         FROM outbox_events_sequence($1)`,
      [SEQUENCE_BATCH],
    );
    if (rows.length === 1 && rows[0]!.seq === '-1') return -1;
    if (rows.length > 0) {
      // Written here only when they follow the head: otherwise another process numbered events in between,
      // and the reader takes them all from the table, in order. A read under way that returns some of
      // these skips them (the head has passed them).
      if (this.headKnown && Number(rows[0]!.seq) === this.head + 1) this.deliver(rows as StreamRow[]);
      else this.wakeReader();
    }
    return rows.length;
  }

  /**
   * A statement of the live path: on the link, one after another, or through the pool (naming no tenant)
   * while there is no link.
   */
  private live<T>(sql: string, params: unknown[]): Promise<T[]> {
    const link = this.link;
    if (!link) {
      return requestContext.run({ requestId: 'event-stream' }, () => this.ds.query(sql, params) as Promise<T[]>);
    }
    const result = this.linkQueue.then(async () => (await link.query(sql, params)).rows as T[]);
    this.linkQueue = result.catch(() => undefined);
    return result;
  }

  private wakeReader(): void {
    if (this.stopped) return;
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = (async () => {
      do {
        this.readAgain = false;
        try {
          await this.knownHead();
          await this.read();
        } catch (err) {
          this.logger.warn({ msg: 'event stream: reading the outbox failed; will retry', error: String(err) });
        }
      } while (this.readAgain && !this.stopped);
    })().finally(() => (this.reading = undefined));
  }

  /** Reads the events after the head, once for every stream of the process, and writes each to its tenant's. */
  private async read(): Promise<void> {
    for (;;) {
      if (this.connections.size === 0) {
        this.head = Math.max(this.head, await this.maxSeq());
        return;
      }
      const rows = await this.live<StreamRow>(
        `SELECT seq, tenant_id, event, payload FROM outbox_events WHERE seq > $1 ORDER BY seq LIMIT $2`,
        [this.head, READ_BATCH],
      );
      this.deliver(rows);
      if (rows.length < READ_BATCH) return;
    }
  }

  /**
   * Writes events (in order, every number up to the last committed) to the live streams of their tenants
   * and moves the head past them, without awaiting anything: a stream catching up sees one or the other.
   * What one stream gets from a batch goes out in one write.
   */
  private deliver(rows: StreamRow[]): void {
    const out = new Map<Connection, Buffer[]>();
    for (const row of rows) {
      const seq = Number(row.seq);
      if (seq <= this.head) continue;
      const streams = this.byTenant.get(row.tenant_id);
      if (streams) {
        // Encoded once for every stream that gets it.
        let bytes: Buffer | undefined;
        for (const conn of streams) {
          if (!conn.live || seq <= conn.cursor) continue;
          conn.cursor = seq;
          if (!conn.wants(row)) continue;
          bytes ??= Buffer.from(frame(row.seq, row.event, JSON.stringify(row.payload)));
          const parts = out.get(conn);
          if (parts) parts.push(bytes);
          else out.set(conn, [bytes]);
        }
      }
      this.head = seq;
    }
    // Streams with the same filter get the same frames: joined once for all of them.
    let joinedParts: Buffer[] = [];
    let joined: Buffer | undefined;
    for (const [conn, parts] of out) {
      if (parts.length === 1) {
        conn.write(parts[0]!);
        continue;
      }
      if (!joined || parts.length !== joinedParts.length || parts.some((part, i) => part !== joinedParts[i])) {
        joinedParts = parts;
        joined = Buffer.concat(parts);
      }
      conn.write(joined);
    }
  }

  /** Reads the head once (until it succeeds): before it, no stream can tell old events from new. */
  private async knownHead(): Promise<void> {
    if (this.headKnown) return;
    const max = await this.maxSeq();
    this.head = Math.max(this.head, max);
    this.headKnown = true;
  }

  /** The highest number given, over every tenant (no tenant named, also when called in a request). */
  private maxSeq(): Promise<number> {
    return requestContext.run({ requestId: 'event-stream' }, async () => {
      const [row] = (await this.ds.query(`SELECT coalesce(max(seq), 0) AS max FROM outbox_events`)) as {
        max: string;
      }[];
      return Number(row.max);
    });
  }
}

function tooManyStreams(message: string, path: string, detail: string): AppError {
  return new AppError(429, 'RATE_LIMITED', message, [{ path, message: detail }], { 'Retry-After': '5' });
}

/** Resolves once `res` drained its output, or closed; rejects when the client reads nothing for too long. */
function drained(res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(() => {
      res.off('drain', done);
      res.off('close', done);
      reject(new Error('the client read nothing for too long'));
    }, DRAIN_TIMEOUT_MS);
    res.once('drain', done);
    res.once('close', done);
  });
}
