import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { KeysetPosition } from '../common/cursor.js';
import { SdfDocument, type DocumentStatus, type SignatureAlgorithmName } from './entities/document.entity.js';
import type { StoredValidation } from './validation-extensions.js';

export interface ListFilter {
  limit: number;
  after?: KeysetPosition;
  status?: DocumentStatus;
  documentType?: string;
}

export interface ValidationOutcome {
  status: 'valid' | 'invalid';
  isSigned: boolean;
  signatureAlgorithm: SignatureAlgorithmName | null;
  documentType: string | null;
  sdfVersion: string | null;
  validation: StoredValidation;
}

/** The columns of a list item (DocumentListItemDto) and of the keyset cursor. */
const LIST_COLUMNS = ['id', 'document_id', 'document_type', 'status', 'is_signed', 'file_size_bytes', 'created_at'];

/** Every document query takes the tenant (S5); the one exception is named for the sweeper that needs it. */
@Injectable()
export class DocumentsRepository {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  private manager(m?: EntityManager): EntityManager {
    return m ?? this.ds.manager;
  }

  findForTenant(tenantId: string, id: string, m?: EntityManager): Promise<SdfDocument | null> {
    return this.manager(m).findOneBy(SdfDocument, { tenant_id: tenantId, id });
  }

  /** The meta column alone (it is not selected by the other lookups): GET /meta/:id. */
  async findMetaForTenant(tenantId: string, id: string): Promise<Record<string, unknown> | null> {
    const rows = (await this.ds.query('SELECT meta FROM documents WHERE tenant_id = $1 AND id = $2', [
      tenantId,
      id,
    ])) as { meta: Record<string, unknown> }[];
    return rows[0]?.meta ?? null;
  }

  findByIdempotencyKey(tenantId: string, key: string, m?: EntityManager): Promise<SdfDocument | null> {
    return this.manager(m).findOneBy(SdfDocument, { tenant_id: tenantId, idempotency_key: key });
  }

  async insert(m: EntityManager, doc: Partial<SdfDocument>): Promise<SdfDocument> {
    const rows = (await m.query(
      `INSERT INTO documents (id, tenant_id, document_id, document_type, schema_id, sdf_version, file_size_bytes,
         storage_key, idempotency_key, meta)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
      [
        doc.id,
        doc.tenant_id,
        doc.document_id,
        doc.document_type ?? null,
        doc.schema_id ?? null,
        doc.sdf_version ?? '0.1',
        doc.file_size_bytes,
        doc.storage_key,
        doc.idempotency_key ?? null,
        JSON.stringify(doc.meta ?? {}),
      ],
    )) as { id: string }[];
    return (await this.findForTenant(doc.tenant_id!, rows[0]!.id, m))!;
  }

  /**
   * S3/S9: the job's one write, conditional on the document still being pending, so a repeated or
   * late run changes nothing. Returns the updated row, or null when there was nothing to settle.
   */
  async settleValidation(
    m: EntityManager,
    tenantId: string,
    id: string,
    outcome: ValidationOutcome,
  ): Promise<SdfDocument | null> {
    const [rows] = (await m.query(
      `UPDATE documents
          SET status = $3, is_signed = $4, signature_algorithm = $5,
              document_type = COALESCE(document_type, $6), sdf_version = COALESCE($7, sdf_version),
              validation = $8, validated_at = now(), updated_at = now()
        WHERE tenant_id = $1 AND id = $2 AND status = 'pending'
        RETURNING id`,
      [
        tenantId,
        id,
        outcome.status,
        outcome.isSigned,
        outcome.signatureAlgorithm,
        outcome.documentType,
        outcome.sdfVersion,
        JSON.stringify(outcome.validation),
      ],
    )) as [{ id: string }[], number];
    if (rows.length === 0) return null;
    return this.findForTenant(tenantId, id, m);
  }

  /** The row locked for update (so a concurrent delete waits for the caller's commit), or null. */
  lockForTenant(m: EntityManager, tenantId: string, id: string): Promise<SdfDocument | null> {
    return m
      .createQueryBuilder(SdfDocument, 'd')
      .setLock('pessimistic_write')
      .where('d.tenant_id = :tenantId AND d.id = :id', { tenantId, id })
      .getOne();
  }

  /**
   * S3/S9: the signing job's write, conditional on the document still being `valid` and unsigned, so
   * a repeated or late run changes nothing. Returns the updated row, or null when there was nothing to settle.
   */
  async settleSigning(
    m: EntityManager,
    tenantId: string,
    id: string,
    outcome: { signatureAlgorithm: SignatureAlgorithmName; fileSizeBytes: number },
  ): Promise<SdfDocument | null> {
    const [rows] = (await m.query(
      `UPDATE documents
          SET status = 'signed', is_signed = true, signature_algorithm = $3, file_size_bytes = $4, signing_error = NULL,
              updated_at = now()
        WHERE tenant_id = $1 AND id = $2 AND status = 'valid' AND NOT is_signed
        RETURNING id`,
      [tenantId, id, outcome.signatureAlgorithm, outcome.fileSizeBytes],
    )) as [{ id: string }[], number];
    if (rows.length === 0) return null;
    return this.findForTenant(tenantId, id, m);
  }

  /** Deletes and returns the row (locked first, so a concurrent delete answers 404, not a second event). */
  async deleteForTenant(m: EntityManager, tenantId: string, id: string): Promise<SdfDocument | null> {
    const doc = await m
      .createQueryBuilder(SdfDocument, 'd')
      .setLock('pessimistic_write')
      .where('d.tenant_id = :tenantId AND d.id = :id', { tenantId, id })
      .getOne();
    if (!doc) return null;
    await m.delete(SdfDocument, { tenant_id: tenantId, id });
    return doc;
  }

  /** S4: one page of (created_at, id) descending after the cursor position; asks for one extra row. */
  async listPage(tenantId: string, filter: ListFilter): Promise<{ rows: SdfDocument[]; hasMore: boolean }> {
    // Only the columns a list item returns: never meta or the validation result.
    const q = this.ds.manager
      .createQueryBuilder(SdfDocument, 'd')
      .select(LIST_COLUMNS.map((c) => `d.${c}`))
      .where('d.tenant_id = :tenantId', { tenantId })
      .orderBy('d.created_at', 'DESC')
      .addOrderBy('d.id', 'DESC')
      .limit(filter.limit + 1);
    if (filter.status) q.andWhere('d.status = :status', { status: filter.status });
    if (filter.documentType) q.andWhere('d.document_type = :type', { type: filter.documentType });
    if (filter.after) {
      q.andWhere('(d.created_at, d.id) < (:afterTime, :afterId)', {
        afterTime: filter.after.createdAt.toISOString(),
        afterId: filter.after.id,
      });
    }
    const rows = await q.getMany();
    return { rows: rows.slice(0, filter.limit), hasMore: rows.length > filter.limit };
  }

  /** S9, sweeper only (spans tenants on purpose): documents pending for longer than `olderThanMs`. */
  async findStalePendingAcrossTenants(
    olderThanMs: number,
    limit: number,
  ): Promise<{ id: string; tenant_id: string }[]> {
    return (await this.ds.query(
      `SELECT id, tenant_id FROM documents
        WHERE status = 'pending' AND created_at < now() - ($1::double precision * interval '1 millisecond')
        ORDER BY created_at LIMIT $2`,
      [olderThanMs, limit],
    )) as { id: string; tenant_id: string }[];
  }
}
