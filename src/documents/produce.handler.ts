import { stat, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { Request, Response } from 'express';
import { AuditService } from '../audit/audit.service.js';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { SchemaRegistryService } from '../schemas/schema-registry.service.js';
import { ProduceBudgetError, SdfError, type PackMetaInput } from '../sdf/index.js';
import { STORAGE_DRIVER, temporaryName, type StorageDriver } from '../storage/storage-driver.js';
import { DocumentsService, type Actor } from './documents.service.js';
import type { DocumentDto } from './dto/document.dto.js';
import type { ProduceDto } from './dto/produce.dto.js';
import type { SpooledFile } from './upload-spool.js';
import { checkIdempotencyKey, UploadHandler } from './upload.handler.js';
import { UploadSlots } from './upload-slots.js';
import { ValidationExtensions } from './validation-extensions.js';
import { ValidationPoolService } from './validation-pool.service.js';

/**
 * POST /sdf/produce: the producer of the format core (rule 10) run by the service. The data is checked
 * against the schema, the PDF rendered and the file packed in a pool process, within the budget files
 * are validated in (F6: values, size, time, memory); the file then goes the way of an upload: stored,
 * recorded `pending` with its audit entry and document.uploaded event, judged by the validation job.
 */
@Injectable()
export class ProduceHandler {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(AppConfig) private readonly config: AppConfig,
    @Inject(STORAGE_DRIVER) private readonly storage: StorageDriver,
    private readonly documents: DocumentsService,
    private readonly uploads: UploadHandler,
    private readonly pool: ValidationPoolService,
    private readonly slots: UploadSlots,
    private readonly registry: SchemaRegistryService,
    private readonly extensions: ValidationExtensions,
    private readonly audit: AuditService,
  ) {}

  async produce(actor: Actor, body: ProduceDto, req: Request, res: Response): Promise<DocumentDto> {
    const key = checkIdempotencyKey(req.get('idempotency-key'));
    const tenantId = actor.auth.tenantId;
    // S2, as on upload: a retry answers the first record and makes nothing.
    const first = await this.documents.replayOf(tenantId, key);
    if (first) return this.uploads.answer(res, { doc: first, replayed: true });

    const { schema, schemaId } = await this.schemaOf(tenantId, body);
    const documentType = body.meta.document_type ?? body.data.document_type;
    if (typeof documentType !== 'string' || documentType === '') {
      throw AppError.badRequest('The document type is missing', [
        { path: '/meta/document_type', message: 'give meta.document_type or a string document_type in data' },
      ]);
    }
    const meta: PackMetaInput = { ...body.meta, document_type: documentType };
    if (schemaId !== undefined) meta.schema_id = schemaId;

    const gone = (release: () => void) => (req.res ?? req).once('close', release);
    let signedWith: { key_id: string; algorithm: string } | undefined;
    const stored = await this.slots.run(tenantId, gone, async () => {
      let file = await this.make(tenantId, { data: body.data, schema, meta });
      try {
        if (body.sign) {
          const unsigned = file;
          file = await this.spooled((output) =>
            this.sign(tenantId, unsigned.path, output).then((k) => (signedWith = k)),
          );
          await unsigned.discard();
        }
        return await this.uploads.withQuota(actor, req, file.size, key, () => this.documents.upload(actor, file, key));
      } finally {
        await file.discard();
      }
    });
    // The signature is the tenant's own act beside the upload: audited as POST /sign/{id} is (S11).
    if (signedWith && !stored.replayed) {
      await this.audit.record(this.ds.manager, {
        tenantId,
        action: 'sign',
        actor: actor.auth.actor,
        resourceId: stored.doc.id,
        ipAddress: actor.ip,
        metadata: { ...signedWith, document_id: stored.doc.document_id },
      });
    }
    return this.uploads.answer(res, stored);
  }

  private sign(tenantId: string, path: string, output: string): Promise<{ key_id: string; algorithm: string }> {
    const signer = this.extensions.signer;
    if (!signer) throw AppError.invalidState('Signing is not available in this process');
    return signer(tenantId, path, output);
  }

  /** The schema given, or the registered one (another tenant's is 404, as one that does not exist: S5). */
  private async schemaOf(
    tenantId: string,
    body: ProduceDto,
  ): Promise<{ schema: Record<string, unknown>; schemaId?: string }> {
    if ((body.schema === undefined) === (body.schema_id === undefined)) {
      throw AppError.badRequest('Give either schema or schema_id', [
        { path: '/schema', message: 'exactly one of schema and schema_id is required' },
      ]);
    }
    if (body.schema !== undefined) {
      if (body.version !== undefined) {
        throw AppError.badRequest('version goes with schema_id', [
          { path: '/version', message: 'only a registered schema has versions' },
        ]);
      }
      return { schema: body.schema };
    }
    const row = await this.registry.get(tenantId, body.schema_id!, body.version);
    return { schema: row.schema, schemaId: row.schema_id };
  }

  /** The file, made in the pool into a new file beside the stored ones (so storing it is a rename). */
  private async make(tenantId: string, input: Parameters<ValidationPoolService['produce']>[1]): Promise<SpooledFile> {
    try {
      return await this.spooled((output) => this.pool.produce(tenantId, input, output));
    } catch (error) {
      if (error instanceof ProduceBudgetError) {
        // F2/F6: a document this large or this slow to lay out is more than the service accepts.
        throw new SdfError('SDF_ERROR_ARCHIVE_TOO_LARGE', error.message, 'data.json');
      }
      throw error;
    }
  }

  /** A new file that `write` makes at the path it is given, in the store's spool folder; removed on failure. */
  private async spooled(write: (output: string) => Promise<unknown>): Promise<SpooledFile> {
    const dir = this.config.env.UPLOAD_TMP_DIR ?? this.storage.spoolDir?.() ?? tmpdir();
    // Named as the store's other temporary files, so its sweep of stale ones covers a crash here too.
    const path = join(dir, temporaryName('.produced'));
    let moved = false;
    const discard = async (): Promise<void> => {
      if (!moved) await rm(path, { force: true });
    };
    try {
      await write(path);
    } catch (error) {
      await discard();
      throw error;
    }
    const { size } = await stat(path);
    return { path, size, filename: null, synced: true, moved: () => (moved = true), discard };
  }
}
