import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bullmq';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import type { EventName, EventPayload } from '../events/events.js';
import { subscribedSql } from '../events/events.service.js';
import { BackgroundOutages } from '../queue/outages.js';
import { QueueName, webhookDeliveryJobOptions } from '../queue/queues.js';
import { deliveryJobId, type WebhookDeliveryJobData } from './jobs/delivery-job.js';
import { WebhooksService } from './webhooks.service.js';

const BATCH_SIZE = 100;
/** The channel the outbox trigger notifies on each committed insert (see the webhooks migration). */
const OUTBOX_CHANNEL = 'outbox_events';
const RELISTEN_DELAY_MS = 2000;
/** A failed pass is tried again after this at most, however long the poll interval is set. */
const RETRY_AFTER_FAILURE_MS = 1000;
/** A pass that skipped rows another transaction held looks again after this (or the poll, if sooner). */
const RETRY_AFTER_SKIPPED_MS = 100;
/** An enqueue that hangs (Redis away) is abandoned after this; the rows stay undispatched. */
const ENQUEUE_TIMEOUT_MS = 15_000;
/** How often dispatched events past OUTBOX_RETENTION_HOURS are deleted, and how many a statement. */
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
const PRUNE_BATCH = 1000;
/** An outbox row `e` that some active webhook of its tenant subscribes to (SDF-SPEC Events). */
const SUBSCRIBED = subscribedSql('e.tenant_id', 'e.event');

interface OutboxRow {
  id: string;
  tenant_id: string;
  event: EventName;
  payload: EventPayload;
  trace_metadata: string | null;
}

/**
 * Hands outbox events to the `webhook-delivery` queue: one job per active webhook of the event's
 * tenant subscribed to the event. A row is marked dispatched in the same transaction that locked it,
 * after the enqueue succeeded, so an event is never lost while Redis is away (it is retried on the
 * next pass) and several worker processes never take the same row (FOR UPDATE SKIP LOCKED). A pass
 * repeated after a crash between enqueue and commit enqueues the same job ids: BullMQ ignores them.
 */
@Injectable()
export class OutboxDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OutboxDispatcher.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** A nudge arrived during a pass: run another right after it. */
  private again = false;
  private listener: pg.Client | undefined;
  private prunedAt = 0;
  /** The last pass left subscribed events behind that another transaction held (SKIP LOCKED). */
  private skipped = false;

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    @InjectQueue(QueueName.WebhookDelivery) private readonly queue: Queue<WebhookDeliveryJobData>,
    private readonly webhooks: WebhooksService,
    private readonly config: AppConfig,
    private readonly outages: BackgroundOutages,
  ) {}

  onApplicationBootstrap(): void {
    this.schedule(0);
    void this.listen();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.listener?.end().catch(() => undefined);
    await this.running;
  }

  /** A pass now rather than at the next tick; passes never overlap. */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  /**
   * LISTEN on a dedicated connection so an event is handed over right after its transaction commits.
   * Losing the connection only costs latency (the poll loop carries on); it is re-established. While the
   * database is away each failed reconnection goes to the outage log, said once for the whole outage.
   */
  private async listen(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.config.env.DATABASE_URL });
    this.listener = client;
    let retried = false;
    const relisten = (err?: Error) => {
      if (retried || this.stopped) return;
      retried = true;
      if (err && !this.outages.failed('outbox listener', err))
        this.logger.warn({ msg: 'outbox listener lost; polling meanwhile', error: err.message });
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      setTimeout(() => void this.listen(), RELISTEN_DELAY_MS).unref();
    };
    client.on('notification', () => this.nudge());
    client.on('error', relisten);
    client.on('end', () => relisten());
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
      // Events committed while we were not listening are picked up by this pass.
      this.nudge();
    } catch (err) {
      relisten(err as Error);
    }
  }

  /** Dispatches until the outbox is drained; returns how many events were handed over. */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.dispatchBatch();
      total += n;
      if (n < BATCH_SIZE || this.stopped) break;
    }
    if (Date.now() - this.prunedAt >= PRUNE_INTERVAL_MS) {
      this.prunedAt = Date.now();
      // Pruning is housekeeping: its failure must not read as a failed dispatch; it is tried next hour.
      await this.prune().catch((err: unknown) => {
        if (!this.outages.failed('outbox prune', err))
          this.logger.warn({ msg: 'outbox prune failed', error: (err as Error).message });
      });
    }
    return total;
  }

  /**
   * Deletes events dispatched more than OUTBOX_RETENTION_HOURS ago, in small batches so no statement
   * holds many locks; undispatched events are never touched. Returns how many were deleted.
   */
  async prune(): Promise<number> {
    let total = 0;
    for (;;) {
      const [, deleted]: [unknown, number] = await this.ds.query(
        `DELETE FROM outbox_events WHERE id IN (
           SELECT id FROM outbox_events
            WHERE dispatched_at < now() - make_interval(hours => $1)
            LIMIT $2)`,
        [this.config.env.OUTBOX_RETENTION_HOURS, PRUNE_BATCH],
      );
      total += deleted;
      if (deleted < PRUNE_BATCH || this.stopped) return total;
    }
  }

  /**
   * One pass: events nobody subscribes to are settled by a single statement (the common case needs no
   * transaction and no further round trip); the rest go through the transactional hand-over.
   */
  async dispatchBatch(): Promise<number> {
    const [{ quiet, waiting }] = (await this.ds.query(
      `WITH quiet AS (
         UPDATE outbox_events SET dispatched_at = now()
          WHERE id IN (
            SELECT e.id FROM outbox_events e
             WHERE e.dispatched_at IS NULL AND NOT ${SUBSCRIBED}
             ORDER BY e.created_at, e.id
             LIMIT $1
             FOR UPDATE SKIP LOCKED)
         RETURNING 1)
       SELECT (SELECT count(*) FROM quiet)::int AS quiet,
              (SELECT count(*) FROM (
                 SELECT 1 FROM outbox_events e WHERE e.dispatched_at IS NULL AND ${SUBSCRIBED} LIMIT $1) w)::int AS waiting`,
      [BATCH_SIZE],
    )) as [{ quiet: number; waiting: number }];
    if (waiting === 0) return quiet;
    const handed = await this.dispatchSubscribed();
    // Fewer handed over than were waiting: the rest were held by another transaction and skipped. The
    // event stream numbers each new event in a transaction of its own (src/events/event-stream.ts), which
    // commits within milliseconds and wakes no dispatcher, so the pass is repeated shortly rather than
    // left to the poll (or to the next commit).
    if (handed < waiting) this.skipped = true;
    return quiet + handed;
  }

  private async dispatchSubscribed(): Promise<number> {
    return this.ds.transaction(async (m) => {
      const rows: OutboxRow[] = await m.query(
        `SELECT id, tenant_id, event, payload, trace_metadata FROM outbox_events e
          WHERE e.dispatched_at IS NULL AND ${SUBSCRIBED}
          ORDER BY e.created_at, e.id
          LIMIT $1
          FOR UPDATE OF e SKIP LOCKED`,
        [BATCH_SIZE],
      );
      if (rows.length === 0) return 0;
      const jobs: { name: string; data: WebhookDeliveryJobData; opts: ReturnType<typeof webhookDeliveryJobOptions> }[] =
        [];
      const options = webhookDeliveryJobOptions(this.config);
      // The active webhooks of the batch's tenants, read once for the whole batch.
      const webhooks = await this.webhooks.activeOf(m, [...new Set(rows.map((r) => r.tenant_id))]);
      for (const row of rows) {
        // SDF-SPEC Events: only active webhooks of this tenant whose list names the event.
        const subscribers = webhooks.filter((w) => w.tenant_id === row.tenant_id && w.events.includes(row.event));
        const body = JSON.stringify(row.payload);
        for (const webhook of subscribers) {
          jobs.push({
            name: row.event,
            data: {
              tenant_id: row.tenant_id,
              webhook_id: webhook.id,
              event_id: row.id,
              event: row.event,
              document_id: row.payload.document_id,
              body,
            },
            // The delivery continues the trace of the change that recorded the event (BullMQ telemetry).
            opts: {
              ...options,
              jobId: deliveryJobId(row.id, webhook.id),
              ...(row.trace_metadata ? { telemetry: { metadata: row.trace_metadata } } : {}),
            },
          });
        }
      }
      if (jobs.length > 0) await withTimeout(this.queue.addBulk(jobs), ENQUEUE_TIMEOUT_MS);
      await m.query(`UPDATE outbox_events SET dispatched_at = now() WHERE id = ANY($1::uuid[])`, [
        rows.map((r) => r.id),
      ]);
      return rows.length;
    });
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      let failed = false;
      this.running = this.drain()
        .then(
          (n) => {
            if (n > 0) this.logger.debug({ msg: 'outbox dispatched', events: n });
          },
          (err: unknown) => {
            failed = true;
            // An outage is said once by the outage log, not once a second here.
            if (!this.outages.failed('outbox dispatch', err))
              this.logger.warn({ msg: 'outbox dispatch failed; will retry', error: (err as Error).message });
          },
        )
        .finally(() => {
          this.running = undefined;
          const now = this.again;
          this.again = false;
          // A pass that failed, or that skipped rows another transaction held, must not leave its events
          // to the next poll, which a long interval can put minutes away: it is repeated soon.
          const interval = this.config.env.WEBHOOK_DISPATCH_INTERVAL_MS;
          const retry = failed ? RETRY_AFTER_FAILURE_MS : this.skipped ? RETRY_AFTER_SKIPPED_MS : interval;
          this.skipped = false;
          this.schedule(now ? 0 : Math.min(interval, retry));
        });
    }, delayMs);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // ETIMEDOUT: Redis did not answer, an outage rather than a fault of the events.
    timer = setTimeout(
      () => reject(Object.assign(new Error(`enqueue timed out after ${ms} ms`), { code: 'ETIMEDOUT' })),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
