import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Job, Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import { isUuid } from '../common/uuid.pipe.js';
import { AppError } from '../common/errors.js';
import type { FailedJobDto, FailedJobListDto, RetriedJobDto } from './dead-letters.dto.js';
import { isQueueName, publicJobId, QueueName } from '../queue/queues.js';

const SUMMARY_MAX_STRING = 200;

/** Scalar fields only, long strings left out: payload bodies and blobs stay in Redis. */
export function summarizeJobData(data: unknown): Record<string, string | number | boolean | null> {
  if (!data || typeof data !== 'object') return {};
  const out: Record<string, string | number | boolean | null> = {};
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    if (value === null || typeof value === 'number' || typeof value === 'boolean') out[key] = value;
    else if (typeof value === 'string' && value.length <= SUMMARY_MAX_STRING) out[key] = value;
  }
  return out;
}

const iso = (ms: number | undefined | null): string | null => (ms ? new Date(ms).toISOString() : null);

/**
 * S9: the dead-letter queue of each queue is BullMQ's failed set (`<queue>:failed`); jobs out of
 * attempts stay there until an operator retries them.
 */
@Injectable()
export class DeadLettersService {
  private readonly queues: Record<QueueName, Queue>;

  constructor(
    @InjectQueue(QueueName.ValidateSdf) validate: Queue,
    @InjectQueue(QueueName.SignSdf) sign: Queue,
    @InjectQueue(QueueName.WebhookDelivery) webhook: Queue,
    @InjectQueue(QueueName.Email) email: Queue,
    @InjectQueue(QueueName.ErpPush) erpPush: Queue,
    @InjectDataSource() private readonly ds: DataSource,
    private readonly audit: AuditService,
  ) {
    this.queues = {
      [QueueName.ValidateSdf]: validate,
      [QueueName.SignSdf]: sign,
      [QueueName.WebhookDelivery]: webhook,
      [QueueName.Email]: email,
      [QueueName.ErpPush]: erpPush,
    };
  }

  async listFailed(queueName: string, limit = 50, offset = 0): Promise<FailedJobListDto> {
    const queue = this.queue(queueName);
    const [total, jobs] = await Promise.all([queue.getFailedCount(), queue.getFailed(offset, offset + limit - 1)]);
    return {
      queue: queue.name,
      total,
      jobs: jobs.filter((j): j is Job => Boolean(j)).map((j) => this.toDto(queue.name as QueueName, j)),
    };
  }

  /** Moves one failed job back to waiting with a fresh set of attempts, and audits who did it (S11). */
  async retry(queueName: string, jobId: string, by: { actor: string; ip: string | null }): Promise<RetriedJobDto> {
    const queue = this.queue(queueName);
    const job = await queue.getJob(jobId);
    if (!job || (await job.getState()) !== 'failed') throw AppError.notFound('Failed job');
    await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    const data = summarizeJobData(job.data);
    // Job data names the tenant `tenant_id` (webhooks) or `tenantId`; the entry is the tenant's when it does.
    const named = data.tenant_id ?? data.tenantId;
    const tenantId = typeof named === 'string' && isUuid(named) ? named : null;
    await this.audit.record(this.ds.manager, {
      tenantId,
      action: 'queue.job_retry',
      actor: by.actor,
      ipAddress: by.ip,
      resourceId: publicJobId(queue.name as QueueName, job.id),
      metadata: { queue: queue.name, name: job.name, failed_reason: job.failedReason ?? null },
    });
    return { id: job.id!, job_id: publicJobId(queue.name as QueueName, job.id), state: 'waiting' };
  }

  private queue(name: string): Queue {
    if (!isQueueName(name)) throw AppError.notFound('Queue');
    return this.queues[name];
  }

  private toDto(queue: QueueName, job: Job): FailedJobDto {
    return {
      id: job.id ?? '',
      job_id: publicJobId(queue, job.id),
      name: job.name,
      data: summarizeJobData(job.data),
      failed_reason: job.failedReason ?? null,
      attempts_made: job.attemptsMade,
      created_at: new Date(job.timestamp).toISOString(),
      processed_at: iso(job.processedOn),
      failed_at: iso(job.finishedOn),
    };
  }
}
