import type { JobsOptions } from 'bullmq';
import type { AppConfig } from '../config/app-config.js';

/** S9: the queues (the three of S9, mail, and C2's erp-push). BullMQ forbids ':' in names, so `job_id` is composed as `<queue>:<id>`. */
export enum QueueName {
  ValidateSdf = 'validate-sdf',
  SignSdf = 'sign-sdf',
  WebhookDelivery = 'webhook-delivery',
  // M1: verification and invitation mails leave through this queue, so SMTP never slows a request.
  Email = 'email',
  /** C2: pushes of documents into an ERP, on a queue of their own. */
  ErpPush = 'erp-push',
}

export const ALL_QUEUES = Object.values(QueueName);

/**
 * S9: validate and sign get 3 attempts with exponential backoff from 2000 ms. A job out of attempts
 * stays in BullMQ's failed set (`<queue>:failed`), which is the dead-letter queue, for inspection and
 * retry: FAILED_JOB_RETENTION_HOURS long and at most FAILED_JOB_RETENTION_COUNT per queue (BullMQ trims
 * the set each time a job fails), so a stream of failures cannot grow Redis without bound.
 */
export function defaultJobOptions(config: AppConfig): JobsOptions {
  return {
    attempts: 3,
    backoff: { type: 'exponential', delay: 2000 },
    removeOnComplete: { age: 24 * 60 * 60, count: 10_000 },
    removeOnFail: { age: config.env.FAILED_JOB_RETENTION_HOURS * 3600, count: config.env.FAILED_JOB_RETENTION_COUNT },
  };
}

/**
 * S9 / SDF-SPEC Events: a webhook delivery is one try plus retries after base, 2x and 4x base
 * (2 s, 4 s, 8 s by default): 4 attempts. BullMQ's exponential backoff waits base * 2^(n-1) after
 * the n-th failure, which is exactly that schedule. Out of attempts it stays in the failed set.
 */
export function webhookDeliveryJobOptions(config: AppConfig): JobsOptions {
  return {
    ...defaultJobOptions(config),
    attempts: 4,
    backoff: { type: 'exponential', delay: config.env.WEBHOOK_RETRY_BASE_DELAY_MS },
  };
}

/**
 * C2: an ERP push gets its own attempts and backoff (an ERP outage lasts longer than a validation
 * hiccup). Each attempt looks the document up before creating it, so retries never duplicate.
 */
export function erpPushJobOptions(config: AppConfig): JobsOptions {
  return {
    ...defaultJobOptions(config),
    attempts: config.env.ERP_PUSH_ATTEMPTS,
    backoff: { type: 'exponential', delay: config.env.ERP_PUSH_RETRY_BASE_DELAY_MS },
  };
}

/** The public job id of S9: `{queue-name}:{queue-job-id}`. */
export function publicJobId(queue: QueueName, jobId: string | undefined): string {
  return `${queue}:${jobId ?? ''}`;
}

export function isQueueName(value: string): value is QueueName {
  return (ALL_QUEUES as string[]).includes(value);
}

/** Mail: five attempts, exponential backoff from the configured base; out of attempts it stays in the failed set. */
export function emailJobOptions(config: AppConfig): JobsOptions {
  return {
    ...defaultJobOptions(config),
    attempts: 5,
    backoff: { type: 'exponential', delay: config.env.EMAIL_RETRY_BASE_DELAY_MS },
  };
}
