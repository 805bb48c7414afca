import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger } from '@nestjs/common';
import type { Job } from 'bullmq';
import { AppConfig } from '../../config/app-config.js';
import type { Env } from '../../config/env.js';
import { EventsService } from '../../events/events.service.js';
import { diskFault } from '../../common/infrastructure-errors.js';
import { OutageGate } from '../../queue/outages.js';
import { QueueName } from '../../queue/queues.js';
import { TenantSlots, type SlotPolicy } from '../../queue/tenant-slots.js';
import { defaultPoolWorkers, isSdfError, WorkerTaskError, type ValidationResult } from '../../sdf/index.js';
import { STORAGE_DRIVER, type StorageDriver } from '../../storage/storage-driver.js';
import { eventData } from '../documents.service.js';
import { DocumentsRepository } from '../documents.repository.js';
import { SIGNATURE_ALGORITHMS, type SignatureAlgorithmName } from '../entities/document.entity.js';
import { ValidationExtensions } from '../validation-extensions.js';
import { ValidationPoolService } from '../validation-pool.service.js';
import type { PendingRecord, ValidateSdfJob } from './validate-sdf.job.js';
import { missingAfterFailure, storedInputForJob } from './stored-file.js';

export type ValidateSdfOutcome =
  { status: 'valid' | 'invalid'; code: string | null } | { skipped: 'gone' | 'already-final' };

/**
 * Validation jobs at once per worker process: VALIDATE_SDF_CONCURRENCY, else four per background pool
 * process. A job spends part of its time on the record (load, settle) and none of it on the pool then,
 * so more jobs than processes keep every pool process busy, with no idle gap between one file and the
 * next, and a tenant alone on the queue uses the whole machine.
 */
export function validateJobConcurrency(
  env: Pick<Env, 'VALIDATE_SDF_CONCURRENCY' | 'VALIDATION_POOL_WORKERS' | 'VALIDATION_MAX_MEMORY_MB'>,
): number {
  return (
    env.VALIDATE_SDF_CONCURRENCY ??
    4 * (env.VALIDATION_POOL_WORKERS ?? defaultPoolWorkers(env.VALIDATION_MAX_MEMORY_MB))
  );
}

/**
 * Worker options come from configuration; `@Processor` metadata is read when the worker is created
 * (module init), so the feature module re-applies the decorator with the configured values first.
 */
export function configureValidateWorker(config: AppConfig): void {
  Processor(QueueName.ValidateSdf, {
    concurrency: validateJobConcurrency(config.env),
    lockDuration: config.env.WORKER_LOCK_DURATION_MS,
    stalledInterval: config.env.WORKER_STALLED_INTERVAL_MS,
  })(ValidateSdfProcessor);
}

/**
 * SDF-SPEC Background processing, validation job: fetch the stored file, run the format core's
 * validate() in the bounded pool, settle the status with a conditional UPDATE and record
 * document.validated in the same transaction. Idempotent (S3): a document already final, or gone,
 * is left alone; a crash before the commit leaves it pending for the retry.
 */
@Processor(QueueName.ValidateSdf)
export class ValidateSdfProcessor extends WorkerHost {
  private readonly logger = new Logger('ValidateSdfProcessor');
  private readonly slots: SlotPolicy;
  private readonly outage: OutageGate;

  constructor(
    @Inject(AppConfig) config: AppConfig,
    private readonly tenantSlots: TenantSlots,
    @Inject(STORAGE_DRIVER) private readonly storage: StorageDriver,
    private readonly documents: DocumentsRepository,
    private readonly events: EventsService,
    private readonly pool: ValidationPoolService,
    private readonly extensions: ValidationExtensions,
  ) {
    super();
    this.outage = new OutageGate(QueueName.ValidateSdf, { maxDelayMs: config.env.JOB_OUTAGE_MAX_DELAY_MS });
    this.slots = {
      perTenant:
        config.env.VALIDATE_TENANT_CONCURRENCY ?? Math.max(1, Math.ceil(validateJobConcurrency(config.env) / 2)),
      // A file is judged within the pool's budget; the lease covers loading it and settling the record too.
      leaseMs: config.env.VALIDATION_TIMEOUT_MS + config.env.WORKER_LOCK_DURATION_MS,
      // enqueueValidation marks every job waiting: a tenant alone on the queue is not held to its share.
      tracksWaiting: true,
    };
  }

  /**
   * A validation out of attempts (a fault of the job's own, never an outage: those postpone it) leaves the
   * document pending: the reason goes on the record (`validation_error` on GET /sdf/:id) and into the log,
   * and the sweeper gives the document a fresh job later.
   */
  @OnWorkerEvent('failed')
  async onFailed(job: Job<ValidateSdfJob> | undefined, error: Error): Promise<void> {
    if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
    const { tenantId, documentId } = job.data;
    const reason = error.message.slice(0, 500);
    this.logger.error({
      msg: 'validation failed for good; the document stays pending until the sweeper tries it again',
      tenant_id: tenantId,
      id: documentId,
      job_id: job.id,
      attempts: job.attemptsMade,
      reason,
    });
    try {
      await this.documents.recordValidationFailure(tenantId, documentId, {
        code: 'VALIDATION_FAILED',
        message: `Validation could not run after ${job.attemptsMade} attempts (${reason}); it is tried again later`,
        failed_at: new Date().toISOString(),
        attempts: job.attemptsMade,
      });
    } catch (err) {
      this.logger.error({
        msg: 'could not record the validation failure',
        tenant_id: tenantId,
        id: documentId,
        reason: (err as Error).message,
      });
    }
  }

  /** One tenant's backlog holds at most its share of the workers (TenantSlots), so others' files pass it. */
  async process(job: Job<ValidateSdfJob>, token?: string): Promise<ValidateSdfOutcome> {
    return this.outage.run(job, token, () =>
      this.tenantSlots.run(QueueName.ValidateSdf, job.data.tenantId, job, token, this.slots, () => this.judge(job)),
    );
  }

  private async judge(job: Job<ValidateSdfJob>): Promise<ValidateSdfOutcome> {
    const { tenantId, documentId, pending } = job.data;
    // The record as it was enqueued (it does not change while pending); a record already final is
    // left alone by the settle's condition, a deleted one is found missing with its file.
    let doc: PendingRecord;
    if (pending) {
      doc = { ...pending, id: documentId, tenant_id: tenantId };
    } else {
      const found = await this.documents.findForTenant(tenantId, documentId);
      if (!found) return { skipped: 'gone' };
      if (found.status !== 'pending') return { skipped: 'already-final' };
      doc = found;
    }

    const file = await storedInputForJob(this.storage, this.documents, doc);
    if (file === null) return { skipped: 'gone' };

    let result: ValidationResult;
    try {
      result = await this.pool.validate(tenantId, file, 'background', doc.schema_id);
    } catch (err) {
      // A full or unreadable disk is an outage (the job waits), never a verdict on the file.
      if ((!(err instanceof WorkerTaskError) && !isSdfError(err)) || diskFault(err)) throw err;
      // A path the pool could not open: the file was deleted while the job waited, not bad content.
      if (typeof file === 'string' && (await missingAfterFailure(this.storage, this.documents, doc))) {
        return { skipped: 'gone' };
      }
      result = contentVerdict('container', err);
    }
    // data.json is not copied out here: GET /data/:id reads it out of the stored file on first use.
    let settled: SettledDoc;
    try {
      settled = await this.settle(job, doc, result);
    } catch (err) {
      if (!isDataException(err)) throw err;
      // The file's text could not be stored (the database refused it): a verdict on the content, not
      // a fault to retry three times and leave the document pending for good.
      result = contentVerdict('data', err);
      settled = await this.settle(job, doc, result);
    }
    if (!settled) {
      // Nothing pending to settle: judged already (a repeated job), or deleted while this one ran.
      return { skipped: (await this.documents.findForTenant(tenantId, documentId)) ? 'already-final' : 'gone' };
    }
    const status = settled.status === 'valid' ? 'valid' : 'invalid';
    this.logger.log({ msg: 'validated', tenant_id: tenantId, id: documentId, status, job_id: job.id });
    // The error code travels in the job's result for the metrics (validation outcomes by code).
    return { status, code: result.error?.code ?? null };
  }

  private async settle(
    job: Job<ValidateSdfJob>,
    pending: PendingRecord,
    result: ValidationResult,
  ): Promise<SettledDoc> {
    const { tenantId, documentId } = job.data;
    const validation = await this.extensions.toStored(tenantId, result);
    const algorithm = result.signature?.algorithm;
    const signed = result.valid && result.is_signed && result.signature?.valid === true;
    const status = result.valid ? 'valid' : 'invalid';
    const outcome = {
      status,
      // S3: a file uploaded with a signature that verifies ends valid with is_signed true.
      isSigned: signed,
      signatureAlgorithm:
        signed && algorithm && (SIGNATURE_ALGORITHMS as readonly string[]).includes(algorithm)
          ? (algorithm as SignatureAlgorithmName)
          : null,
      documentType: result.document_type,
      sdfVersion: result.sdf_version,
      validation,
      // Valid and invalid files alike, as far as data.json could be read (null when it does not parse).
      summary: result.summary ?? null,
    } as const;
    // The status and document.validated in one statement; the webhook feature delivers the event from
    // the outbox, and the result travels with it.
    return this.documents.settleValidation(tenantId, documentId, outcome, pending, (updated) =>
      this.events.build(tenantId, 'document.validated', {
        ...eventData(updated),
        valid: result.valid,
        is_signed: updated.is_signed,
        error: result.error ? { code: result.error.code, message: result.error.message } : null,
      }),
    );
  }
}

type SettledDoc = Awaited<ReturnType<DocumentsRepository['settleValidation']>>;

/** PostgreSQL's class 22 (data exception: NUL in text, an unsupported escape in jsonb, ...). */
function isDataException(err: unknown): boolean {
  const code =
    (err as { driverError?: { code?: unknown }; code?: unknown }).driverError?.code ?? (err as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('22');
}

/**
 * An error caused by the file's content is a verdict, not a retry: the document settles `invalid` with
 * a code. `stage` is the check it is charged to; the checks before it had passed.
 */
export function contentVerdict(stage: 'container' | 'data', err: unknown): ValidationResult {
  const checks: ValidationResult['checks'] = {
    container: stage === 'container' ? 'fail' : 'pass',
    meta: stage === 'container' ? 'skipped' : 'pass',
    schema: stage === 'container' ? 'skipped' : 'pass',
    data: stage === 'data' ? 'fail' : 'skipped',
    pdf: 'skipped',
    signature: 'skipped',
  };
  const base = { valid: false, sdf_version: null, document_type: null, is_signed: false, checks, warnings: [] };
  if (isSdfError(err)) {
    const error = {
      code: err.code,
      message: err.message,
      details: err.details,
      ...(err.file ? { file: err.file } : {}),
    };
    return { ...base, error };
  }
  const message =
    stage === 'data'
      ? 'the file holds text the service cannot store (a NUL character or a lone UTF-16 surrogate)'
      : 'the file could not be judged: its content made the validation fail';
  const code = stage === 'data' ? 'SDF_ERROR_INVALID_DATA' : 'SDF_ERROR_INVALID_ARCHIVE';
  return { ...base, error: { code, message, details: [{ path: '', message }] } };
}
