import type { Queue } from 'bullmq';
import { QueueName } from '../../queue/queues.js';
import type { TenantSlots } from '../../queue/tenant-slots.js';
import type { SdfDocument } from '../entities/document.entity.js';

/**
 * What the job needs of a pending record, as the record was when the job was enqueued. Only the job
 * changes a pending record, and none of these fields change while it is pending, so the job need not
 * read the record back (a delete meanwhile is found when the file or the record is missing).
 */
export type PendingRecord = Pick<
  SdfDocument,
  'id' | 'tenant_id' | 'storage_key' | 'document_id' | 'document_type' | 'schema_id' | 'sdf_version'
>;

/**
 * Payload of a validate-sdf job; the tenant id travels with every job (STYLE: Jobs). `pending` is
 * absent from jobs enqueued before it existed: the job then reads the record.
 */
export interface ValidateSdfJob {
  tenantId: string;
  documentId: string;
  pending?: Omit<PendingRecord, 'id' | 'tenant_id'>;
}

export const VALIDATE_JOB_NAME = 'validate';

/**
 * S9: the BullMQ job id is the document id, so a second enqueue of the same document (a retry after a
 * lost acknowledgement, the sweeper) is a no-op while the first job exists. The job is marked waiting
 * for its tenant first (TenantSlots), so other tenants' jobs keep to their share while it waits.
 */
export async function enqueueValidation(queue: Queue, slots: TenantSlots, doc: PendingRecord): Promise<string> {
  await slots.waiting(QueueName.ValidateSdf, doc.tenant_id, doc.id);
  const data: ValidateSdfJob = {
    tenantId: doc.tenant_id,
    documentId: doc.id,
    pending: {
      storage_key: doc.storage_key,
      document_id: doc.document_id,
      document_type: doc.document_type,
      schema_id: doc.schema_id,
      sdf_version: doc.sdf_version,
    },
  };
  const job = await queue.add(VALIDATE_JOB_NAME, data, { jobId: doc.id });
  return job.id ?? doc.id;
}
