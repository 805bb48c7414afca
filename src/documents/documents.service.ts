import { randomUUID } from 'node:crypto';
import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bullmq';
import { Readable } from 'node:stream';
import type { DataSource, EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import type { TenantAuth } from '../auth/auth-context.js';
import { decodeCursor, encodeCursor } from '../common/cursor.js';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { EventsService } from '../events/events.service.js';
import type { EventData } from '../events/events.js';
import { QueueName } from '../queue/queues.js';
import { UsageMetering } from '../rate-limit/usage-metering.js';
import { DataBudgetError, readMeta, WorkerTaskError } from '../sdf/index.js';
import {
  STORAGE_DRIVER,
  StorageNotFoundError,
  documentDataKey,
  documentKey,
  spoolTarget,
  type StorageDriver,
} from '../storage/storage-driver.js';
import { DocumentsRepository } from './documents.repository.js';
import {
  decodeSearchCursor,
  encodeSearchCursor,
  normalizeQuery,
  type ListRow,
  type SearchPosition,
} from './documents-search.js';
import type { ListDocumentsQueryDto } from './dto/list-query.dto.js';
import type { SdfDocument } from './entities/document.entity.js';
import { enqueueValidation } from './jobs/validate-sdf.job.js';
import { TenantSlots } from '../queue/tenant-slots.js';
import type { SpooledFile } from './upload-spool.js';
import { ValidationPoolService } from './validation-pool.service.js';
import { diskFault, isInfrastructureError } from '../common/infrastructure-errors.js';

/** Who acts, for audit entries (S11). */
export interface Actor {
  auth: TenantAuth;
  ip: string | null;
}

const UNIQUE_VIOLATION = '23505';

export function eventData(
  doc: Pick<SdfDocument, 'id' | 'document_id' | 'document_type' | 'schema_id'> & { status: string },
  status: string = doc.status,
): EventData {
  return {
    id: doc.id,
    document_id: doc.document_id,
    document_type: doc.document_type,
    status,
    schema_id: doc.schema_id,
  };
}

/**
 * Endpoints that answer from a validated document (GET /data/:id, POST /verify/:id) refuse one that
 * is still pending or failed validation: its bytes were never judged, or were judged hostile (S3).
 */
export function requireValidated(doc: SdfDocument, what: string): void {
  if (doc.status === 'valid' || doc.status === 'signed') return;
  throw AppError.invalidState(
    doc.status === 'pending'
      ? `The document is still pending validation; ${what} is available once it is valid`
      : `The document failed validation; ${what} is available for valid documents only`,
  );
}

@Injectable()
export class DocumentsService {
  private readonly logger = new Logger('DocumentsService');

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(AppConfig) private readonly config: AppConfig,
    @Inject(STORAGE_DRIVER) private readonly storage: StorageDriver,
    @InjectQueue(QueueName.ValidateSdf) private readonly validateQueue: Queue,
    private readonly documents: DocumentsRepository,
    private readonly audit: AuditService,
    private readonly events: EventsService,
    private readonly pool: ValidationPoolService,
    private readonly slots: TenantSlots,
    private readonly metering: UsageMetering,
  ) {}

  /** S2: the record a repeated Idempotency-Key answers with, if that key was used before. */
  async replayOf(tenantId: string, idempotencyKey: string | null): Promise<SdfDocument | null> {
    return idempotencyKey ? this.documents.findByIdempotencyKey(tenantId, idempotencyKey) : null;
  }

  /**
   * S2: partial read of meta.json from the spooled file, store the file, then in one transaction the
   * record (pending), its audit entry and the document.uploaded event; the validation job is enqueued
   * after commit (S9). Returns the first record for a repeated Idempotency-Key.
   */
  async upload(
    actor: Actor,
    file: SpooledFile,
    idempotencyKey: string | null,
  ): Promise<{ doc: SdfDocument; replayed: boolean }> {
    const tenantId = actor.auth.tenantId;
    const first = await this.replayOf(tenantId, idempotencyKey);
    if (first) return { doc: first, replayed: true };
    // SdfError (NOT_ZIP, INVALID_META, ...) becomes 422 in the exception filter; nothing is stored yet.
    const meta = await readMeta(file.path, this.pool.limits);
    const id = randomUUID();
    const storageKey = documentKey(tenantId, id);
    const { moved } = await this.storage.putFile(storageKey, file.path, { synced: file.synced });
    if (moved) file.moved();

    let doc: SdfDocument;
    try {
      const record = {
        id,
        tenant_id: tenantId,
        document_id: meta.document_id,
        document_type: meta.document_type ?? null,
        schema_id: typeof meta.schema_id === 'string' ? meta.schema_id : null,
        sdf_version: meta.sdf_version,
        file_size_bytes: file.size,
        storage_key: storageKey,
        idempotency_key: idempotencyKey,
        meta: meta as unknown as Record<string, unknown>,
      };
      doc = await this.documents.insertUploaded(
        record,
        {
          action: 'upload',
          actor: actor.auth.actor,
          ipAddress: actor.ip,
          metadata: {
            document_type: record.document_type,
            file_size_bytes: record.file_size_bytes,
            document_id: record.document_id,
          },
        },
        this.events.build(tenantId, 'document.uploaded', eventData({ ...record, status: 'pending' })),
      );
    } catch (err) {
      await this.storage.delete(storageKey).catch(() => undefined);
      const code = (err as { driverError?: { code?: string }; code?: string }).driverError?.code;
      if (idempotencyKey && code === UNIQUE_VIOLATION) {
        // A concurrent retry with the same key won the race: answer with its record.
        const first = await this.documents.findByIdempotencyKey(tenantId, idempotencyKey);
        if (first) return { doc: first, replayed: true };
      }
      throw err;
    }
    // Bounded: with Redis away the answer must not wait for it (a process that also runs workers keeps
    // waiting connections); the enqueue still lands when Redis returns, and the sweeper covers a lost one.
    await withinMs(enqueueValidation(this.validateQueue, this.slots, doc), ENQUEUE_WAIT_MS).catch((err: unknown) => {
      // The record is committed; the pending sweeper enqueues it again (S9).
      const level = isInfrastructureError(err) ? 'debug' : 'warn';
      this.logger[level]({ msg: 'enqueue failed; the sweeper will retry', tenant_id: tenantId, id, err: String(err) });
    });
    return { doc, replayed: false };
  }

  async get(tenantId: string, id: string): Promise<SdfDocument> {
    const doc = await this.documents.findForTenant(tenantId, id);
    if (!doc) throw AppError.notFound('Document');
    return doc;
  }

  /** S11: download is audited; the entry commits before the first byte leaves. */
  async download(actor: Actor, id: string): Promise<{ doc: SdfDocument; stream: Readable }> {
    const doc = await this.get(actor.auth.tenantId, id);
    const stream = await this.storage.get(doc.storage_key);
    try {
      await this.ds.transaction((m) =>
        this.record(m, actor, 'download', doc, { file_size_bytes: doc.file_size_bytes }),
      );
    } catch (err) {
      // No answer will read the opened file: close it now, not when the collector finds it.
      stream.destroy();
      throw err;
    }
    return { doc, stream };
  }

  /**
   * data.json of a validated document, byte for byte as it is in the stored file. The first request
   * has a pool process read it out of the archive (the API never inflates or parses one) and keeps the
   * copy beside the file; later ones stream the copy. A pending or invalid document has no judged data: 409.
   */
  async data(tenantId: string, id: string): Promise<Readable> {
    const doc = await this.get(tenantId, id);
    requireValidated(doc, 'its data');
    const key = documentDataKey(tenantId, id);
    try {
      return await this.storage.get(key);
    } catch (err) {
      if (!(err instanceof StorageNotFoundError)) throw err;
    }
    try {
      await this.keepData(doc, key);
    } catch (err) {
      if (!(await this.documents.findForTenant(tenantId, id))) throw AppError.notFound('Document');
      // A full or unwritable disk (writing the copy) is the service's, answered 507/503, not the file's.
      if (diskFault(err)) throw err;
      if (err instanceof WorkerTaskError || err instanceof DataBudgetError) {
        throw AppError.invalidState(`The stored file's data.json cannot be read: ${err.message}`);
      }
      throw err;
    }
    return this.storage.get(key);
  }

  /** Reads data.json out of the stored file in the pool and stores it under `key`. */
  private async keepData(doc: SdfDocument, key: string): Promise<void> {
    const storage = this.storage;
    if (storage.localPath && storage.spoolDir) {
      // The pool process writes it into the store's temporary folder; it is then moved into place, so
      // even a data.json of tens of MB never passes through this process.
      // The pool process makes the folder when it is missing.
      const target = spoolTarget(storage, storage.spoolDir(), '.data');
      try {
        await this.pool.extractData(doc.tenant_id, storage.localPath(doc.storage_key), target.path);
        await target.store(key);
      } finally {
        await target.discard();
      }
    } else {
      const { data } = await this.pool.extractData(doc.tenant_id, await storage.getBuffer(doc.storage_key));
      if (!data) throw new Error('the validation pool returned no data.json');
      await storage.put(key, Readable.from([data]));
    }
    // Deleted meanwhile: the copy goes too, so nothing of the document outlives it.
    if (!(await this.documents.findForTenant(doc.tenant_id, doc.id))) {
      await storage.delete(key).catch(() => undefined);
      throw AppError.notFound('Document');
    }
  }

  /** F4 service shape of meta.json: the one lookup that reads the meta column. */
  async meta(tenantId: string, id: string): Promise<Record<string, unknown>> {
    const meta = await this.documents.findMetaForTenant(tenantId, id);
    if (!meta) throw AppError.notFound('Document');
    return meta;
  }

  /**
   * data.json of a document whose data has been judged (valid or signed), for features that act on
   * the business data (ERP connectors). Any other status is 409: pending data is unjudged and
   * invalid data is wrong. Another tenant's document is 404 (S5).
   */
  async readDataForTenant(tenantId: string, id: string): Promise<{ doc: SdfDocument; data: unknown }> {
    const doc = await this.get(tenantId, id);
    if (doc.status !== 'valid' && doc.status !== 'signed') {
      throw AppError.invalidState(`Document is ${doc.status}; only valid or signed documents can be used`);
    }
    // data.json of a judged file: it passed the schema and the F5/F6 bounds (depth, value count).
    const chunks: Buffer[] = [];
    for await (const chunk of await this.data(tenantId, id)) chunks.push(chunk as Buffer);
    return { doc, data: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown };
  }

  /**
   * S4: keyset page, with the search over the summaries; the cursor is checked strictly before any query.
   * The default order (uploaded, newest first) keeps its cursor form; another sort's cursor names the sort.
   */
  async list(
    tenantId: string,
    query: ListDocumentsQueryDto,
  ): Promise<{ rows: ListRow[]; hasMore: boolean; nextCursor: string | null }> {
    if ((query.amount_min !== undefined || query.amount_max !== undefined) && query.currency === undefined) {
      throw AppError.badRequest('Invalid query parameters', [
        {
          path: '/currency',
          message: 'is required with amount_min or amount_max (totals in different currencies do not compare)',
        },
      ]);
    }
    // Relevance ranks by the business number (an exact number first, then documents naming it, then numbers
    // holding it): the default for a query with a digit in it. For words alone (a name) no number decides,
    // and newest first is the order, which the list's own index serves without ranking every match.
    const q = query.q !== undefined ? normalizeQuery(query.q) : '';
    const sort = query.sort ?? (/\p{N}/u.test(q) ? 'relevance' : 'uploaded');
    const order = query.order ?? 'desc';
    const classic = sort === 'uploaded' && order === 'desc';
    let after: SearchPosition | undefined;
    if (query.cursor !== undefined) {
      after = classic ? { key: null, ...decodeCursor(query.cursor) } : decodeSearchCursor(query.cursor, sort, order);
    }
    const { rows, hasMore } = await this.documents.listPage(tenantId, {
      limit: query.limit ?? 20,
      after,
      status: query.status,
      documentType: query.document_type,
      createdFrom: query.created_from !== undefined ? new Date(query.created_from) : undefined,
      createdBefore: query.created_before !== undefined ? new Date(query.created_before) : undefined,
      q: query.q,
      counterparty: query.counterparty,
      amountMin: query.amount_min,
      amountMax: query.amount_max,
      currency: query.currency,
      issuedFrom: query.issued_from,
      issuedTo: query.issued_to,
      dueFrom: query.due_from,
      dueTo: query.due_to,
      references: query.references,
      sort,
      order,
    });
    const last = rows[rows.length - 1];
    let nextCursor: string | null = null;
    if (hasMore && last) {
      const createdAt = new Date(last.created_at);
      nextCursor = classic
        ? encodeCursor({ createdAt, id: last.id })
        : encodeSearchCursor(sort, order, { key: last.sort_key, createdAt, id: last.id });
    }
    return { rows, hasMore, nextCursor };
  }

  /**
   * Record, audit entry and document.deleted commit together (with, on the managed deployment, the bytes
   * freed as a storage change, M3); the stored object goes after commit.
   */
  async delete(actor: Actor, id: string): Promise<void> {
    const tenantId = actor.auth.tenantId;
    const doc = await this.ds.transaction(async (m) => {
      const removed = await this.documents.deleteForTenant(m, tenantId, id, {
        meterStorage: this.metering.recordsStorageChanges,
      });
      if (!removed) throw AppError.notFound('Document');
      await this.record(m, actor, 'delete', removed, {
        // The audit log names a deleted document by the title it had.
        title: removed.summary?.title ?? null,
        document_type: removed.document_type,
        file_size_bytes: removed.file_size_bytes,
        status: removed.status,
      });
      await this.events.record(m, tenantId, 'document.deleted', eventData(removed, 'deleted'));
      return removed;
    });
    // M3: bytes stored go down by the change the commit recorded, once: counted here, or by the usage
    // flush should this process die or Redis fail first. The delete is committed either way, so a failed
    // count neither fails the answer nor keeps the stored file.
    await this.metering.countStorageChanges(tenantId, doc.id).catch((err: unknown) => {
      const level = isInfrastructureError(err) ? 'debug' : 'warn';
      this.logger[level]({ msg: 'storage change left for the usage flush', tenant_id: tenantId, id, err: String(err) });
    });
    await this.storage.delete(documentDataKey(tenantId, doc.id)).catch(() => undefined);
    await this.storage.delete(doc.storage_key).catch((err: unknown) => {
      this.logger.error({
        msg: 'stored object not deleted',
        tenant_id: tenantId,
        key: doc.storage_key,
        err: String(err),
      });
    });
    await this.validateQueue.remove(doc.id).catch(() => undefined);
  }

  private record(
    m: EntityManager,
    actor: Actor,
    action: string,
    doc: SdfDocument,
    metadata: Record<string, unknown>,
  ): Promise<void> {
    return this.audit.record(m, {
      tenantId: actor.auth.tenantId,
      action,
      actor: actor.auth.actor,
      resourceId: doc.id,
      ipAddress: actor.ip,
      metadata,
    });
  }
}

/** How long an upload's answer waits for its validation job to be enqueued. */
const ENQUEUE_WAIT_MS = 2_000;

function withinMs<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
