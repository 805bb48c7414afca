import type { Queue } from 'bullmq';
import { QueueName } from '../../queue/queues.js';
import type { TenantSlots } from '../../queue/tenant-slots.js';

/** Payload of a validate-sdf job; the tenant id travels with every job (STYLE: Jobs). */
export interface ValidateSdfJob {
  tenantId: string;
  documentId: string;
}

export const VALIDATE_JOB_NAME = 'validate';

/**
 * S9: the BullMQ job id is the document id, so a second enqueue of the same document (a retry after a
 * lost acknowledgement, the sweeper) is a no-op while the first job exists. The job is marked waiting
 * for its tenant first (TenantSlots), so other tenants' jobs keep to their share while it waits.
 */
export async function enqueueValidation(
  queue: Queue,
  slots: TenantSlots,
  doc: { id: string; tenant_id: string },
): Promise<string> {
  await slots.waiting(QueueName.ValidateSdf, doc.tenant_id, doc.id);
  const data: ValidateSdfJob = { tenantId: doc.tenant_id, documentId: doc.id };
  const job = await queue.add(VALIDATE_JOB_NAME, data, { jobId: doc.id });
  return job.id ?? doc.id;
}
