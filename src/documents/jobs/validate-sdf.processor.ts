import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Job } from 'bullmq';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../../config/app-config.js';
import { EventsService } from '../../events/events.service.js';
import { QueueName } from '../../queue/queues.js';
import { STORAGE_DRIVER, type StorageDriver } from '../../storage/storage-driver.js';
import { eventData } from '../documents.service.js';
import { DocumentsRepository } from '../documents.repository.js';
import { SIGNATURE_ALGORITHMS, type SignatureAlgorithmName } from '../entities/document.entity.js';
import { ValidationExtensions } from '../validation-extensions.js';
import { ValidationPoolService } from '../validation-pool.service.js';
import type { ValidateSdfJob } from './validate-sdf.job.js';
import { loadStoredFileForJob } from './stored-file.js';

export type ValidateSdfOutcome = { status: 'valid' | 'invalid' } | { skipped: 'gone' | 'already-final' };

/**
 * Worker options come from configuration; `@Processor` metadata is read when the worker is created
 * (module init), so the feature module re-applies the decorator with the configured values first.
 */
export function configureValidateWorker(config: AppConfig): void {
  Processor(QueueName.ValidateSdf, {
    concurrency: config.env.VALIDATE_SDF_CONCURRENCY,
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

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(STORAGE_DRIVER) private readonly storage: StorageDriver,
    private readonly documents: DocumentsRepository,
    private readonly events: EventsService,
    private readonly pool: ValidationPoolService,
    private readonly extensions: ValidationExtensions,
  ) {
    super();
  }

  async process(job: Job<ValidateSdfJob>): Promise<ValidateSdfOutcome> {
    const { tenantId, documentId } = job.data;
    const doc = await this.documents.findForTenant(tenantId, documentId);
    if (!doc) return { skipped: 'gone' };
    if (doc.status !== 'pending') return { skipped: 'already-final' };

    const file = await loadStoredFileForJob(this.storage, this.documents, doc);
    if (!file) return { skipped: 'gone' };

    const result = await this.pool.validate(tenantId, file);
    const validation = await this.extensions.toStored(tenantId, result);
    const algorithm = result.signature?.algorithm;
    const signed = result.valid && result.is_signed && result.signature?.valid === true;
    const status = result.valid ? 'valid' : 'invalid';

    const settled = await this.ds.transaction(async (m) => {
      const updated = await this.documents.settleValidation(m, tenantId, documentId, {
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
      });
      if (!updated) return null;
      // The webhook feature delivers this from the outbox; the result travels with it.
      await this.events.record(m, tenantId, 'document.validated', {
        ...eventData(updated),
        valid: result.valid,
        is_signed: updated.is_signed,
        error: result.error ? { code: result.error.code, message: result.error.message } : null,
      });
      return updated;
    });
    if (!settled) return { skipped: 'already-final' };
    this.logger.log({ msg: 'validated', tenant_id: tenantId, id: documentId, status, job_id: job.id });
    return { status };
  }
}
