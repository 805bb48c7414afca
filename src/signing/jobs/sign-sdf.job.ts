import type { Queue } from 'bullmq';

/** Payload of a sign-sdf job; the tenant id travels with every job (STYLE: Jobs). */
export interface SignSdfJob {
  tenantId: string;
  documentId: string;
}

export const SIGN_JOB_NAME = 'sign';

/**
 * S9: the BullMQ job id is the document id, so a double POST /sign/:id (or a client retry) finds the
 * first job and never signs twice. A job that already ended while the document is still `valid`
 * (dead-lettered after three failures, or finished without signing) would block every later request
 * under that id, so it is taken up again: a dead-lettered one is retried in place (its failure history
 * stays), a completed one is replaced.
 */
export async function enqueueSigning(queue: Queue, doc: { id: string; tenant_id: string }): Promise<string> {
  const data: SignSdfJob = { tenantId: doc.tenant_id, documentId: doc.id };
  const state = await queue.getJobState(doc.id);
  if (state === 'failed') {
    const job = await queue.getJob(doc.id);
    if (job) {
      await job.retry('failed');
      return doc.id;
    }
  } else if (state === 'completed') {
    await queue.remove(doc.id);
  }
  const job = await queue.add(SIGN_JOB_NAME, data, { jobId: doc.id });
  return job.id ?? doc.id;
}
