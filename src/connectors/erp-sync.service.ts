import { randomUUID } from 'node:crypto';
import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { DocumentsService } from '../documents/documents.service.js';
import { erpPushJobOptions, QueueName } from '../queue/queues.js';
import type { ConnectorActor } from './connectors.service.js';
import { ConnectorsService } from './connectors.service.js';
import type { MatchResultDto, PushDto } from './dto/connector.dto.js';
import { ErpPush } from './entities/erp-push.entity.js';
import { describeFailure, ErpGateway } from './erp-gateway.js';
import { resilient } from './erp/http.js';
import { compareInvoice, compareNomination } from './erp/match.js';
import { toErpDoc } from './erp/model.js';
import type { ErpPushJobData } from './jobs/erp-push.job.js';

export function pushDto(p: ErpPush): PushDto {
  return {
    push_id: p.id,
    connector_id: p.connector_id,
    document_id: p.document_id,
    status: p.status,
    erp_document_id: p.erp_document_id,
    error: p.error,
    attempts: p.attempts,
    created_at: p.created_at.toISOString(),
    updated_at: p.updated_at.toISOString(),
  };
}

/** An ERP that could not be asked (down, refusing, answering errors): 502, the ERP's words in the message. */
function erpUnavailable(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError(502, 'ERP_ERROR', `The ERP could not be asked: ${describeFailure(err)}`);
}

/** Matching documents against the ERP and pushing them into it (C2). */
@Injectable()
export class ErpSyncService {
  private readonly logger = new Logger('ErpSyncService');

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly config: AppConfig,
    private readonly connectors: ConnectorsService,
    private readonly documents: DocumentsService,
    private readonly gateway: ErpGateway,
    private readonly audit: AuditService,
    @InjectQueue(QueueName.ErpPush) private readonly queue: Queue,
  ) {}

  /**
   * An invoice's purchase order by `order_ref`, a nomination's delivery by `nomination_ref`, compared
   * field by field. Only valid or signed documents (409 otherwise). Audited.
   */
  async match(by: ConnectorActor, documentId: string, connectorId?: string): Promise<MatchResultDto> {
    const tenantId = by.auth.tenantId;
    const connector = await this.connectors.usable(tenantId, connectorId);
    const { doc, data } = await this.documents.readDataForTenant(tenantId, documentId);
    const erpDoc = toErpDoc(doc.document_type, data);
    const ref = erpDoc.kind === 'invoice' ? erpDoc.orderRef : erpDoc.nominationRef;
    if (!ref) {
      const field = erpDoc.kind === 'invoice' ? 'order_ref' : 'nomination_ref';
      throw AppError.invalidState(`The document has no ${field} to match by`);
    }
    const adapter = await this.gateway.adapterFor(connector);
    let result: MatchResultDto;
    try {
      if (erpDoc.kind === 'invoice') {
        const order = await resilient(this.gateway.transport, (signal) => adapter.findOrder(ref, signal));
        const differences = order ? compareInvoice(erpDoc, order, adapter.supplierKey) : [];
        result = {
          matched: order !== null && differences.length === 0,
          connector_id: connector.id,
          erp_document: order
            ? {
                id: order.id,
                type: 'purchase_order',
                supplier: order.supplier,
                currency: order.currency,
                net: order.net,
                lines: order.lines.length,
              }
            : null,
          differences,
        };
      } else {
        const delivery = await resilient(this.gateway.transport, (signal) => adapter.findDelivery(ref, signal));
        const differences = delivery ? compareNomination(erpDoc, delivery, adapter.supplierKey) : [];
        result = {
          matched: delivery !== null && differences.length === 0,
          connector_id: connector.id,
          erp_document: delivery ? { type: 'delivery', ...delivery } : null,
          differences,
        };
      }
    } catch (err) {
      throw erpUnavailable(err);
    }
    await this.ds.transaction((m) =>
      this.audit.record(m, {
        tenantId,
        action: 'connector.match',
        resourceId: doc.id,
        actor: by.auth.actor,
        ipAddress: by.ip,
        metadata: {
          connector_id: connector.id,
          reference: ref,
          matched: result.matched,
          erp_document_id: result.erp_document?.id ?? null,
          differences: result.differences.length,
        },
      }),
    );
    return result;
  }

  /**
   * 202 with the push: one per (connector, document). Pushing again answers with the existing push;
   * the push row and its audit entry commit together and the job is enqueued after commit.
   */
  async push(
    by: ConnectorActor,
    documentId: string,
    connectorId: string,
  ): Promise<{ push: PushDto; created: boolean }> {
    const tenantId = by.auth.tenantId;
    const connector = await this.connectors.usable(tenantId, connectorId);
    const { doc, data } = await this.documents.readDataForTenant(tenantId, documentId);
    toErpDoc(doc.document_type, data); // refuse now what the job could never map
    const { push, created } = await this.ds.transaction(async (m) => {
      const id = randomUUID();
      const inserted = (await m.query(
        `INSERT INTO erp_pushes (id, tenant_id, connector_id, document_id) VALUES ($1, $2, $3, $4)
         ON CONFLICT (connector_id, document_id) DO NOTHING RETURNING id`,
        [id, tenantId, connector.id, doc.id],
      )) as { id: string }[];
      const row = await m.findOneOrFail(ErpPush, { where: { connector_id: connector.id, document_id: doc.id } });
      if (inserted.length) {
        await this.audit.record(m, {
          tenantId,
          action: 'connector.push',
          resourceId: doc.id,
          actor: by.auth.actor,
          ipAddress: by.ip,
          metadata: { connector_id: connector.id, push_id: row.id, erp_type: connector.erp_type },
        });
      }
      return { push: row, created: inserted.length > 0 };
    });
    if (created || push.status === 'queued') await this.enqueue(push);
    return { push: pushDto(push), created };
  }

  async getPush(tenantId: string, pushId: string): Promise<PushDto> {
    const p = await this.ds.manager.findOne(ErpPush, { where: { id: pushId, tenant_id: tenantId } });
    if (!p) throw AppError.notFound('Push');
    return pushDto(p);
  }

  async erpStatus(tenantId: string, documentId: string): Promise<PushDto[]> {
    await this.documents.get(tenantId, documentId);
    const rows = await this.ds.manager.find(ErpPush, {
      where: { tenant_id: tenantId, document_id: documentId },
      order: { created_at: 'ASC', id: 'ASC' },
    });
    return rows.map(pushDto);
  }

  /** The job id is the push id: a second enqueue of the same push is a no-op in BullMQ. */
  private async enqueue(p: ErpPush): Promise<void> {
    const data: ErpPushJobData = { tenant_id: p.tenant_id, push_id: p.id };
    await this.queue.add('push', data, { ...erpPushJobOptions(this.config), jobId: p.id }).catch((err: unknown) => {
      this.logger.error({ msg: 'erp-push enqueue failed', tenant_id: p.tenant_id, push_id: p.id, err: String(err) });
      throw err;
    });
  }
}
