import { Readable } from 'node:stream';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { UnrecoverableError, type Job } from 'bullmq';
import type { DataSource } from 'typeorm';
import { AuditService } from '../../audit/audit.service.js';
import { AppError } from '../../common/errors.js';
import { AppConfig } from '../../config/app-config.js';
import { DocumentsRepository, type SigningRecord } from '../../documents/documents.repository.js';
import { eventData } from '../../documents/documents.service.js';
import type { SdfDocument } from '../../documents/entities/document.entity.js';
import { ValidationPoolService } from '../../documents/validation-pool.service.js';
import { EventsService } from '../../events/events.service.js';
import { preparedTransaction } from '../../database/prepared.js';
import { OutageGate } from '../../queue/outages.js';
import { QueueName } from '../../queue/queues.js';
import { UsageMetering } from '../../rate-limit/usage-metering.js';
import { STORAGE_DRIVER, spoolTarget, type StorageDriver } from '../../storage/storage-driver.js';
import { SigningKeysService, type ActiveSigningKey } from '../signing-keys.service.js';
import { SigningThreadsService } from '../signing-threads.service.js';
import type { SignSdfJob } from './sign-sdf.job.js';
import { loadStoredFileForJob, missingAfterFailure } from '../../documents/jobs/stored-file.js';

export type SignSdfOutcome = { status: 'signed'; key_id: string } | { skipped: 'gone' | 'already-final' };

/**
 * S9: the sign workers' own options, applied before the worker is created (module init reads the
 * `@Processor` metadata). SIGN_SDF_CONCURRENCY is separate from VALIDATE_SDF_CONCURRENCY: the two
 * queues have their own workers, so sign jobs never queue behind validation jobs.
 */
export function configureSignWorker(config: AppConfig): void {
  Processor(QueueName.SignSdf, {
    concurrency: config.env.SIGN_SDF_CONCURRENCY,
    lockDuration: config.env.WORKER_LOCK_DURATION_MS,
    stalledInterval: config.env.WORKER_STALLED_INTERVAL_MS,
  })(SignSdfProcessor);
}

/** S3: only a valid document that carries no signature yet is signed; anything else is final for this job. */
function signable(doc: Pick<SdfDocument, 'status' | 'is_signed'>): boolean {
  return doc.status === 'valid' && !doc.is_signed;
}

/**
 * SDF-SPEC Background processing, signing job: fetch the stored file, decrypt the tenant's active key,
 * add signature.sig (F9, no other entry changes), overwrite the object under the same storage key
 * (atomic, S13), then set signed with a conditional UPDATE and record document.signed in that
 * transaction. Idempotent (S3): a document already final, or gone, is left alone. On the managed
 * deployment the file's growth is recorded in that transaction too and counted in usage after it, once
 * (M3): a rerun counts what an earlier run committed but did not count.
 */
@Processor(QueueName.SignSdf)
export class SignSdfProcessor extends WorkerHost {
  private readonly logger = new Logger('SignSdfProcessor');
  private readonly outage: OutageGate;

  constructor(
    @Inject(AppConfig) config: AppConfig,
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(STORAGE_DRIVER) private readonly storage: StorageDriver,
    private readonly documents: DocumentsRepository,
    private readonly events: EventsService,
    private readonly keys: SigningKeysService,
    private readonly pool: ValidationPoolService,
    private readonly threads: SigningThreadsService,
    private readonly audit: AuditService,
    private readonly metering: UsageMetering,
  ) {
    super();
    this.outage = new OutageGate(QueueName.SignSdf, { maxDelayMs: config.env.JOB_OUTAGE_MAX_DELAY_MS });
  }

  /**
   * A sign job out of attempts, or refused (SigningRefused), fails for good: the document stays `valid`,
   * so the reason must be visible where a client looks (signing_error on GET /sdf/:id, and the
   * document.signing_failed event, written in the same transaction), in the log and in the audit trail.
   * The reason shown to the tenant is the service's own message when it is one; anything else (a key
   * that does not decrypt, storage down) is logged in full and summarised for the tenant.
   */
  @OnWorkerEvent('failed')
  async onFailed(job: Job<SignSdfJob> | undefined, error: Error): Promise<void> {
    if (!job) return;
    const refused = error instanceof SigningRefused;
    if (!refused && job.attemptsMade < (job.opts.attempts ?? 1)) return;
    const { tenantId, documentId } = job.data;
    const cause = refused ? error.refusal : error;
    const signingError = {
      code: cause instanceof AppError ? cause.code : 'SIGNING_FAILED',
      message:
        cause instanceof AppError
          ? cause.message
          : `Signing failed after ${job.attemptsMade} attempts; POST /sign/:id tries again`,
      failed_at: new Date().toISOString(),
      attempts: job.attemptsMade,
    };
    this.logger.error({
      msg: 'signing failed for good',
      tenant_id: tenantId,
      id: documentId,
      job_id: job.id,
      attempts: job.attemptsMade,
      reason: cause.message,
    });
    try {
      await this.ds.transaction(async (m) => {
        const [rows] = (await m.query(
          `UPDATE documents SET signing_error = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2 AND NOT is_signed
           RETURNING id, document_id, document_type, schema_id, status`,
          [tenantId, documentId, JSON.stringify(signingError)],
        )) as [Pick<SdfDocument, 'id' | 'document_id' | 'document_type' | 'schema_id' | 'status'>[], number];
        if (rows.length === 0) return;
        await this.audit.record(m, {
          tenantId,
          action: 'sign.failed',
          actor: 'system:sign-sdf',
          resourceId: documentId,
          metadata: { job_id: job.id, attempts: job.attemptsMade, code: signingError.code, reason: cause.message },
        });
        // The tenant's words only (signing_error.message), never the logged reason: no key material, no stack.
        await this.events.record(m, tenantId, 'document.signing_failed', {
          ...eventData(rows[0]),
          reason: signingError.message,
          code: signingError.code,
          attempts: signingError.attempts,
        });
      });
    } catch (err) {
      this.logger.error({
        msg: 'could not record the signing failure',
        tenant_id: tenantId,
        id: documentId,
        reason: (err as Error).message,
      });
    }
  }

  process(job: Job<SignSdfJob>, token?: string): Promise<SignSdfOutcome> {
    return this.outage.run(job, token, () => this.sign(job));
  }

  private async sign(job: Job<SignSdfJob>): Promise<SignSdfOutcome> {
    const { tenantId, documentId } = job.data;
    // One statement: the document and, beside it, the tenant's active key (sealed).
    const found = await this.documents.findWithActiveKey(tenantId, documentId);
    if (!found) return { skipped: 'gone' };
    const { doc } = found;
    if (!signable(doc)) {
      // M3: a run after a death or a failed count between an earlier run's commit and its count counts
      // the growth now; if it was counted, nothing is left to count.
      await this.metering.countStorageChanges(tenantId, documentId);
      return { skipped: 'already-final' };
    }
    // No active key: asking again cannot change that (only an operator creating one can), so the job
    // ends now rather than after its retries; POST /sign/:id takes it up again once there is a key.
    if (!found.key) throw new SigningRefused(this.keys.refusalWithoutKey());
    const key = this.keys.unseal(found.key);

    // The CPU work happens before the row is locked (and on a signing thread, not the event loop), so
    // the lock is held only for the write and commit.
    const signed = await this.signStored(doc, key);
    if (!signed) return { skipped: 'gone' };

    let settled: boolean;
    try {
      settled = await preparedTransaction(this.ds, async (query) => {
        // S3/S9: the conditional UPDATE (with its event) takes the row lock, so a concurrent delete waits
        // for this commit and then removes the signed file with the record: an overwrite never lands
        // after a delete and leaves an orphan behind. A valid, unsigned record does not change until it
        // is signed, so the event is built from the row read above.
        const updated = await this.documents.settleSigning(
          query,
          doc,
          {
            signatureAlgorithm: key.algorithm,
            fileSizeBytes: signed.size,
            meterStorage: this.metering.recordsStorageChanges,
          },
          (settledDoc) =>
            this.events.build(tenantId, 'document.signed', {
              ...eventData(settledDoc),
              algorithm: key.algorithm,
              key_id: key.keyId,
            }),
        );
        if (!updated) return false;
        // S13: atomic replace under the same key, while the row is locked; a failed write rolls the
        // update back. Should the commit fail after it, the stored file is signed while the record still
        // says valid; the retry signs it again (signArchive replaces signature.sig) and settles the record.
        await signed.store(doc.storage_key);
        return true;
      });
    } finally {
      await signed.discard();
    }
    // M3: the signed file replaced the stored one; bytes stored now follow the committed size. The growth
    // was recorded with the commit: counted here, or by the next run (or the usage flusher) should this
    // process die or Redis fail first.
    await this.metering.countStorageChanges(tenantId, documentId);
    if (!settled) return { skipped: 'already-final' };
    this.logger.log({
      msg: 'signed',
      tenant_id: tenantId,
      id: documentId,
      key_id: key.keyId,
      algorithm: key.algorithm,
      job_id: job.id,
    });
    return { status: 'signed', key_id: key.keyId };
  }

  /**
   * The stored file signed, ready to be stored over the original; null when the document is gone. On
   * this machine's disk the signing thread reads the file and writes the signed one (flushed) into the
   * store's temporary folder, to be moved into place: neither passes through the event loop. Otherwise
   * the bytes are fetched, signed on a thread and written back.
   */
  private async signStored(doc: SigningRecord, key: ActiveSigningKey): Promise<SignedFile | null> {
    const options = { ...key, limits: this.pool.limits };
    const storage = this.storage;
    if (storage.localPath && storage.spoolDir) {
      // The signing thread makes the folder when it is missing.
      const target = spoolTarget(storage, storage.spoolDir(), '.signed');
      try {
        const { size } = await this.threads.signToFile(storage.localPath(doc.storage_key), options, target.path);
        return { size, store: target.store, discard: target.discard };
      } catch (err) {
        await target.discard();
        if ((await missingAfterFailure(storage, this.documents, doc)) === 'gone') return null;
        throw err;
      }
    }
    const file = await loadStoredFileForJob(storage, this.documents, doc);
    if (!file) return null;
    const bytes = await this.threads.sign(file, options);
    return {
      size: bytes.length,
      store: async (storageKey) => void (await storage.put(storageKey, Readable.from([bytes]))),
      discard: async () => undefined,
    };
  }
}

/**
 * A refusal that asking again cannot change: BullMQ fails the job at once (an UnrecoverableError), and
 * the failure says the service's own words.
 */
class SigningRefused extends UnrecoverableError {
  constructor(readonly refusal: AppError) {
    super(refusal.message);
  }
}

/** A signed archive waiting to replace the stored one. */
interface SignedFile {
  size: number;
  /** Puts it under the storage key (atomic, S13). */
  store(storageKey: string): Promise<void>;
  /** Removes what is left of it once stored or abandoned. */
  discard(): Promise<void>;
}
