import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { TenantAuth } from '../auth/auth-context.js';
import { DiskOutages } from '../common/disk-outages.js';
import { AppError, errorBody } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { quotaExceeded, UsageMetering } from '../rate-limit/usage-metering.js';
import type { ValidationResult } from '../sdf/index.js';
import { STORAGE_DRIVER, type StorageDriver } from '../storage/storage-driver.js';
import { DocumentsService, type Actor } from './documents.service.js';
import { DocumentDto, summaryOf } from './dto/document.dto.js';
import type { ValidateFailedDto, ValidateOkDto } from './dto/validate-result.dto.js';
import type { SdfDocument } from './entities/document.entity.js';
import { removeSpoolFiles, spoolUpload, type SpooledFile } from './upload-spool.js';
import { UploadSlots } from './upload-slots.js';
import { ValidationExtensions } from './validation-extensions.js';
import { ValidationPoolService } from './validation-pool.service.js';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** S2: an Idempotency-Key header, when sent, is 1 to 255 visible ASCII characters (else 400). */
export function checkIdempotencyKey(key: string | undefined): string | null {
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    throw AppError.badRequest('Malformed Idempotency-Key', [
      { path: '/headers/idempotency-key', message: 'must be 1 to 255 visible ASCII characters' },
    ]);
  }
  return key ?? null;
}

/** The HTTP side of file uploads: spool the body (never in memory), hand the file on, always clean up. */
@Injectable()
export class UploadHandler implements OnApplicationShutdown {
  private readonly logger = new Logger('UploadHandler');

  constructor(
    @Inject(AppConfig) private readonly config: AppConfig,
    @Inject(STORAGE_DRIVER) private readonly storage: StorageDriver,
    private readonly documents: DocumentsService,
    private readonly pool: ValidationPoolService,
    private readonly extensions: ValidationExtensions,
    private readonly slots: UploadSlots,
    private readonly metering: UsageMetering,
  ) {}

  /** The shutdown has cut the uploads still running by now: their spool files go with this process. */
  async onApplicationShutdown(): Promise<void> {
    const removed = await removeSpoolFiles();
    if (removed) this.logger.log({ msg: 'spool files of cut uploads removed', count: removed });
  }

  /**
   * `store`: the file is to be stored, so it is flushed to disk as it is written (then moved into place).
   * The body is read in one of the tenant's upload slots, given back when the work ends or the client goes.
   */
  private async withFile<T>(
    tenantId: string,
    req: Request,
    store: boolean,
    use: (file: SpooledFile) => Promise<T>,
  ): Promise<T> {
    const env = this.config.env;
    // The response's `close`: when the answer has gone out, or the connection dropped (the request's own
    // `close` already comes once its body is read).
    const gone = (release: () => void) => (req.res ?? req).once('close', release);
    return this.slots.run(tenantId, gone, async () => {
      const file = await spoolUpload(req, {
        maxBytes: env.MAX_UPLOAD_BYTES,
        // Beside the stored files unless configured, so storing the upload moves it instead of copying it.
        tmpDir: env.UPLOAD_TMP_DIR ?? this.storage.spoolDir?.(),
        durable: store,
      });
      try {
        const result = await use(file);
        // A body written to disk (and stored, for an upload): an episode of a full disk, if one was open, is over.
        DiskOutages.shared.cleared();
        return result;
      } finally {
        await file.discard();
      }
    });
  }

  async upload(actor: Actor, req: Request, res: Response, idempotencyKey: string | undefined): Promise<DocumentDto> {
    let key: string | null;
    try {
      key = checkIdempotencyKey(idempotencyKey);
    } catch (error) {
      req.resume();
      throw error;
    }
    const tenantId = actor.auth.tenantId;
    // S2: a retry of a stored upload answers the first record before anything else. It needs no quota
    // (the document is stored and counted already), no upload slot and no spool file; its body is dropped.
    const first = await this.documents.replayOf(tenantId, key);
    if (first) {
      req.resume();
      return this.answer(res, { doc: first, replayed: true });
    }
    const stored = await this.withFile(tenantId, req, true, (file) =>
      this.withQuota(actor, req, file.size, key, () => this.documents.upload(actor, file, key)),
    );
    return this.answer(res, stored);
  }

  answer(res: Response, { doc, replayed }: { doc: SdfDocument; replayed: boolean }): DocumentDto {
    if (replayed) res.setHeader('Idempotent-Replayed', 'true');
    return DocumentDto.from(doc);
  }

  /**
   * M3 (the managed deployment's metering): the upload's document and bytes are reserved before anything is stored, so
   * concurrent uploads cannot overshoot a quota; a refused upload stores nothing, and a reservation that
   * does not become a new document (refused file, failure, idempotent replay) is given back.
   */
  async withQuota(
    actor: Actor,
    req: Request,
    bytes: number,
    idempotencyKey: string | null,
    store: () => Promise<{ doc: SdfDocument; replayed: boolean }>,
  ): Promise<{ doc: SdfDocument; replayed: boolean }> {
    const tenantId = actor.auth.tenantId;
    const reservation = await this.metering.reserveUpload(tenantId, bytes);
    if (!reservation.ok) {
      // A concurrent upload with the same key stored the document while this body was arriving: a replay.
      const first = await this.documents.replayOf(tenantId, idempotencyKey);
      if (first) return { doc: first, replayed: true };
      // Limits: the first refusal of a quota in its period is audited.
      if (reservation.firstRefusal) {
        const by = { actor: actor.auth.actor, ip: actor.ip };
        await this.metering.auditRefusal(tenantId, reservation.quota, by, { method: req.method, path: req.path });
      }
      throw quotaExceeded(reservation.quota, reservation.retryAfterSeconds);
    }
    let kept = false;
    try {
      const result = await store();
      kept = !result.replayed;
      return result;
    } finally {
      if (!kept) await this.metering.release(tenantId, reservation);
    }
  }

  /** POST /validate: the whole validation, synchronously, in the pool; nothing is stored (F10). */
  async validate(auth: TenantAuth, req: Request, res: Response): Promise<ValidateOkDto | ValidateFailedDto> {
    const result: ValidationResult = await this.withFile(auth.tenantId, req, false, (file) =>
      this.pool.validate(auth.tenantId, file.path, 'interactive'),
    );
    const stored = await this.extensions.toStored(auth.tenantId, result);
    if (!result.valid) {
      res.status(422);
      const message = 'validation failed';
      const error = result.error ?? { code: 'SDF_ERROR_INVALID_ARCHIVE', message, details: [{ path: '', message }] };
      return {
        valid: false,
        ...errorBody(error.code, error.message, error.details, error.file),
        checks: result.checks,
        summary: summaryOf(result.summary),
      };
    }
    res.status(200);
    return {
      valid: true,
      sdf_version: result.sdf_version ?? '0.1',
      document_type: result.document_type ?? '',
      is_signed: result.is_signed,
      checks: result.checks,
      warnings: result.warnings,
      ...(result.signature ? { signature: result.signature } : {}),
      registry_match: stored.registry_match,
      summary: summaryOf(result.summary),
    };
  }
}
