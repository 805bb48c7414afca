import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { UnrecoverableError, type Job } from 'bullmq';
import type { DataSource } from 'typeorm';
import { AuditService } from '../../audit/audit.service.js';
import { AppError } from '../../common/errors.js';
import { AppConfig } from '../../config/app-config.js';
import { DocumentsService, eventData } from '../../documents/documents.service.js';
import type { SdfDocument } from '../../documents/entities/document.entity.js';
import { EventsService } from '../../events/events.service.js';
import { diskFault, isInfrastructureError } from '../../common/infrastructure-errors.js';
import { OutageGate } from '../../queue/outages.js';
import { QueueName } from '../../queue/queues.js';
import { Connector } from '../entities/connector.entity.js';
import { ErpPush } from '../entities/erp-push.entity.js';
import { describeFailure, ErpGateway } from '../erp-gateway.js';
import { isTransient, resilient } from '../erp/http.js';
import { toErpDoc } from '../erp/model.js';
import type { ErpPushJobData } from './erp-push.job.js';

/** The actor of entries the push machinery writes itself. */
export const PUSH_ACTOR = 'system:erp-push';

export type ErpPushOutcome = { erp_document_id: string; found_existing: boolean } | { skipped: string };

/** Worker options from configuration (read when the worker is created), as for the other queues. */
export function configureErpPushWorker(config: AppConfig): void {
  Processor(QueueName.ErpPush, {
    concurrency: config.env.ERP_PUSH_CONCURRENCY,
    lockDuration: config.env.WORKER_LOCK_DURATION_MS,
    stalledInterval: config.env.WORKER_STALLED_INTERVAL_MS,
  })(ErpPushProcessor);
}

/**
 * Pushes one document into one ERP (C2). Exactly once in the ERP: every attempt (an in-line retry
 * after a 5xx or a time-out, a job retry, a job taken over from a dead worker) first looks the
 * document up by its reference and creates it only when the ERP has none, so a create the ERP
 * accepted but we never recorded is found, not repeated. A refusal that asking again cannot change
 * (a 4xx other than 429, a refused address, a document no longer valid) fails the job at once; it
 * then lies in the queue's failed set like every other dead job.
 */
@Processor(QueueName.ErpPush)
export class ErpPushProcessor extends WorkerHost {
  private readonly logger = new Logger('ErpPushProcessor');

  private readonly outage: OutageGate;

  constructor(
    @Inject(AppConfig) config: AppConfig,
    @InjectDataSource() private readonly ds: DataSource,
    private readonly documents: DocumentsService,
    private readonly gateway: ErpGateway,
    private readonly audit: AuditService,
    private readonly events: EventsService,
  ) {
    super();
    this.outage = new OutageGate(QueueName.ErpPush, { maxDelayMs: config.env.JOB_OUTAGE_MAX_DELAY_MS });
  }

  process(job: Job<ErpPushJobData>, token?: string): Promise<ErpPushOutcome> {
    return this.outage.run(job, token, () => this.push(job));
  }

  private async push(job: Job<ErpPushJobData>): Promise<ErpPushOutcome> {
    const { tenant_id: tenantId, push_id: pushId } = job.data;
    const push = await this.ds.manager.findOne(ErpPush, { where: { id: pushId, tenant_id: tenantId } });
    if (!push) return { skipped: 'push gone' };
    if (push.status === 'succeeded') return { skipped: 'already succeeded' };
    const log = { tenant_id: tenantId, push_id: pushId, job_id: job.id, attempt: job.attemptsMade + 1 };
    await this.ds.query(
      `UPDATE erp_pushes SET status = 'running', attempts = attempts + 1, updated_at = now()
       WHERE id = $1 AND tenant_id = $2 AND status <> 'succeeded'`,
      [pushId, tenantId],
    );
    // Set while the ERP is being called: its network errors are the ERP's, which use up attempts (C2);
    // anything else unreachable (PostgreSQL, the store) is this service's outage and postpones the job.
    let callingErp = false;
    try {
      const connector = await this.ds.manager.findOne(Connector, {
        where: { id: push.connector_id, tenant_id: tenantId },
      });
      if (!connector) throw AppError.notFound('Connector');
      if (!connector.is_active) throw AppError.invalidState('Connector is not active');
      const { doc, data } = await this.documents.readDataForTenant(tenantId, push.document_id);
      const erpDoc = toErpDoc(doc.document_type, data);
      const adapter = await this.gateway.adapterFor(connector);
      let foundExisting = false;
      callingErp = true;
      const erpId = await resilient(this.gateway.transport, async (signal) => {
        const existing = await adapter.findPushed(erpDoc, signal);
        if (existing) {
          foundExisting = true;
          return existing;
        }
        return adapter.create(erpDoc, signal);
      });
      callingErp = false;
      await this.settle(push, 'succeeded', erpId, null, { found_existing: foundExisting });
      this.logger.log({ msg: 'pushed to ERP', ...log, erp_document_id: erpId, found_existing: foundExisting });
      return { erp_document_id: erpId, found_existing: foundExisting };
    } catch (err) {
      // Our own dependencies away (the database, Redis, the store or its disk): the job waits (OutageGate).
      if (!callingErp && (isInfrastructureError(err) || diskFault(err))) throw err;
      const reason = err instanceof AppError ? err.message : describeFailure(err);
      const final = !isTransient(err) || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      this.logger.warn({ msg: 'ERP push failed', ...log, final, reason });
      if (final) {
        await this.settle(push, 'failed', null, reason, {});
        throw new UnrecoverableError(reason);
      }
      await this.ds.query(
        `UPDATE erp_pushes SET status = 'queued', error = $3, updated_at = now()
         WHERE id = $1 AND tenant_id = $2 AND status = 'running'`,
        [pushId, tenantId, reason],
      );
      // In words only, so the ERP's network error codes are never taken for this service's outage.
      throw new Error(reason);
    }
  }

  /**
   * The outcome, its audit entry and its document.erp_pushed event commit together; a push already
   * succeeded is never overwritten. Called once per finished push (success, or the final failure), never
   * for an attempt that will be retried.
   */
  private async settle(
    push: ErpPush,
    status: 'succeeded' | 'failed',
    erpId: string | null,
    error: string | null,
    extra: Record<string, unknown>,
  ): Promise<void> {
    await this.ds.transaction(async (m) => {
      // The push row goes with its document and connector (both cascade to it): what the event describes.
      const rows = (await m.query(
        `WITH p AS (
           UPDATE erp_pushes SET status = $3, erp_document_id = $4, error = $5, updated_at = now()
            WHERE id = $1 AND tenant_id = $2 AND status <> 'succeeded'
            RETURNING tenant_id, connector_id, document_id)
         SELECT d.id, d.document_id, d.document_type, d.schema_id, d.status, c.erp_type
           FROM p JOIN documents d ON d.tenant_id = p.tenant_id AND d.id = p.document_id
                  JOIN connectors c ON c.tenant_id = p.tenant_id AND c.id = p.connector_id`,
        [push.id, push.tenant_id, status, erpId, error],
      )) as (Pick<SdfDocument, 'id' | 'document_id' | 'document_type' | 'schema_id' | 'status'> & {
        erp_type: string;
      })[];
      if (!rows.length) return;
      const { erp_type: erpType, ...doc } = rows[0];
      await this.audit.record(m, {
        tenantId: push.tenant_id,
        action: status === 'succeeded' ? 'connector.push_succeeded' : 'connector.push_failed',
        resourceId: push.document_id,
        actor: PUSH_ACTOR,
        metadata: { push_id: push.id, connector_id: push.connector_id, erp_document_id: erpId, error, ...extra },
      });
      await this.events.record(m, push.tenant_id, 'document.erp_pushed', {
        ...eventData(doc),
        push_id: push.id,
        connector_id: push.connector_id,
        erp_type: erpType,
        outcome: status,
        erp_document_id: erpId,
        reason: error,
      });
    });
  }
}
