import type { JobsOptions } from 'bullmq';

/** S9: the three queues. BullMQ forbids ':' in names, so `job_id` is composed as `<queue>:<id>`. */
export enum QueueName {
  ValidateSdf = 'validate-sdf',
  SignSdf = 'sign-sdf',
  WebhookDelivery = 'webhook-delivery',
}

export const ALL_QUEUES = Object.values(QueueName);

/**
 * S9: validate and sign get 3 attempts with exponential backoff from 2000 ms. A job out of attempts
 * stays in BullMQ's failed set (`<queue>:failed`), which is the dead-letter queue: never auto-removed.
 */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 2000 },
  removeOnComplete: { age: 24 * 60 * 60, count: 10_000 },
  removeOnFail: false,
};

/**
 * S9 / SDF-SPEC Events: a webhook delivery is one try plus retries after base, 2x and 4x base
 * (2 s, 4 s, 8 s by default): 4 attempts. BullMQ's exponential backoff waits base * 2^(n-1) after
 * the n-th failure, which is exactly that schedule. Out of attempts it stays in the failed set.
 */
export function webhookDeliveryJobOptions(baseDelayMs: number): JobsOptions {
  return { ...DEFAULT_JOB_OPTIONS, attempts: 4, backoff: { type: 'exponential', delay: baseDelayMs } };
}

/** The public job id of S9: `{queue-name}:{queue-job-id}`. */
export function publicJobId(queue: QueueName, jobId: string | undefined): string {
  return `${queue}:${jobId ?? ''}`;
}

export function isQueueName(value: string): value is QueueName {
  return (ALL_QUEUES as string[]).includes(value);
}
