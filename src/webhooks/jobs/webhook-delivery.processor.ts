import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { UnrecoverableError, type Job } from 'bullmq';
import type { DataSource } from 'typeorm';
import { AuditService } from '../../audit/audit.service.js';
import { AppConfig } from '../../config/app-config.js';
import { OutageGate } from '../../queue/outages.js';
import { QueueName } from '../../queue/queues.js';
import { TenantSlots, type SlotPolicy } from '../../queue/tenant-slots.js';
import { deliver } from '../delivery-client.js';
import { TargetRefusedError, WebhookResolver } from '../ssrf.js';
import { WebhooksService } from '../webhooks.service.js';
import type { WebhookDeliveryJobData } from './delivery-job.js';

/** The actor of entries the delivery machinery writes itself (no request behind them). */
export const DELIVERY_ACTOR = 'system:webhook-delivery';

export type DeliveryResult = { delivered: true; status: number } | { delivered: false; skipped: string };

/**
 * Delivers one event to one webhook (SDF-SPEC Events, S10). A failure throws, and BullMQ retries
 * on the webhook schedule; the last failure leaves the job in the failed set (S9 dead letter) after
 * this writes the one `webhook.delivery_failed` audit entry. A refused target (S10) is not retried:
 * asking again cannot make a private address public.
 */
@Processor(QueueName.WebhookDelivery, { concurrency: 10 })
export class WebhookDeliveryProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(WebhookDeliveryProcessor.name);
  private readonly outage: OutageGate;

  constructor(
    private readonly webhooks: WebhooksService,
    private readonly resolver: WebhookResolver,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
    @InjectDataSource() private readonly ds: DataSource,
    private readonly slots: TenantSlots,
  ) {
    super();
    this.outage = new OutageGate(QueueName.WebhookDelivery, { maxDelayMs: config.env.JOB_OUTAGE_MAX_DELAY_MS });
  }

  onApplicationBootstrap(): void {
    // The decorator's value is static; the configured one applies once the worker exists.
    this.worker.concurrency = this.config.env.WEBHOOK_CONCURRENCY;
  }

  /**
   * One tenant's slow or failing receivers hold at most its share of the delivery slots (TenantSlots),
   * so other tenants' deliveries do not wait behind them.
   */
  async process(job: Job<WebhookDeliveryJobData>, token?: string): Promise<DeliveryResult> {
    const env = this.config.env;
    const policy: SlotPolicy = {
      perTenant: env.WEBHOOK_TENANT_CONCURRENCY ?? Math.max(1, Math.ceil(env.WEBHOOK_CONCURRENCY / 2)),
      leaseMs: env.WEBHOOK_TIMEOUT_MS + env.WORKER_LOCK_DURATION_MS,
    };
    return this.outage.run(job, token, () =>
      this.slots.run(QueueName.WebhookDelivery, job.data.tenant_id, job, token, policy, () => this.deliverOne(job)),
    );
  }

  private async deliverOne(job: Job<WebhookDeliveryJobData>): Promise<DeliveryResult> {
    const data = job.data;
    const webhook = await this.webhooks.findForDelivery(data.tenant_id, data.webhook_id);
    // Deleted or paused since dispatch: nothing to deliver, and nothing failed.
    if (!webhook) return { delivered: false, skipped: 'webhook deleted' };
    if (!webhook.is_active) return { delivered: false, skipped: 'webhook inactive' };
    const log = { tenant_id: data.tenant_id, webhook_id: data.webhook_id, event_id: data.event_id, job_id: job.id };
    try {
      const outcome = await deliver(
        {
          url: webhook.url,
          secret: this.webhooks.secretOf(webhook),
          body: data.body,
          event: data.event,
          deliveryId: data.event_id,
        },
        {
          timeoutMs: this.config.env.WEBHOOK_TIMEOUT_MS,
          guard: this.webhooks.guardsTargets,
          resolver: this.resolver,
        },
      );
      if (outcome.ok) {
        this.logger.log({ msg: 'webhook delivered', ...log, status: outcome.status, attempt: job.attemptsMade + 1 });
        return { delivered: true, status: outcome.status };
      }
      throw new Error(outcome.reason);
    } catch (err) {
      const refused = err instanceof TargetRefusedError;
      const reason = (err as Error).message;
      const last = refused || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      this.logger.warn({ msg: 'webhook delivery failed', ...log, attempt: job.attemptsMade + 1, last, reason });
      if (last) await this.recordFailure(job, reason);
      // The receiver's failure, in words only: its network error codes are not this service's outage and
      // must use up the delivery's attempts (SDF-SPEC Events), never postpone it.
      throw refused ? new UnrecoverableError(reason) : new Error(reason);
    }
  }

  /** SDF-SPEC Events / S11: one audit entry when a delivery has used its last attempt. */
  private async recordFailure(job: Job<WebhookDeliveryJobData>, reason: string): Promise<void> {
    const data = job.data;
    await this.audit.record(this.ds.manager, {
      tenantId: data.tenant_id,
      action: 'webhook.delivery_failed',
      actor: DELIVERY_ACTOR,
      resourceId: data.webhook_id,
      metadata: {
        event_id: data.event_id,
        event: data.event,
        document_id: data.document_id,
        job_id: `${QueueName.WebhookDelivery}:${job.id ?? ''}`,
        attempts: job.attemptsMade + 1,
        reason,
      },
    });
  }
}
