import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { AuditRecord } from '../audit/audit.service.js';
import { preparedQuery, type PreparedRunner } from '../database/prepared.js';
import { dispatchedAtSql, type OutboxRow } from '../events/events.service.js';
import { SdfDocument, type SignatureAlgorithmName, type SigningError } from './entities/document.entity.js';
import type { StoredValidation } from './validation-extensions.js';
import type { DocumentSummary } from '../sdf/summary.js';
import {
  amountPlan,
  amountRangeCountSql,
  hasAmountRange,
  listPageSql,
  PAGE_ROWS_SQL,
  SEARCH_ROLE,
  summarySetSql,
  summaryParams,
  SUMMARY_PARAM_COUNT,
  usesSearchIndexes,
  type AmountPlan,
  type ListRow,
  type PageKey,
  type SearchFilter,
} from './documents-search.js';
import type { PendingRecord } from './jobs/validate-sdf.job.js';
import type { SealedSigningKey } from '../signing/entities/signing-key.entity.js';

export interface ValidationOutcome {
  status: 'valid' | 'invalid';
  isSigned: boolean;
  signatureAlgorithm: SignatureAlgorithmName | null;
  documentType: string | null;
  sdfVersion: string | null;
  validation: StoredValidation;
  /** undefined: the run stopped before meta.json (stored as null). */
  summary?: DocumentSummary | null;
}

/**
 * Every column but `meta` (read by GET /meta/:id alone). The hot paths (upload, the jobs, GET /sdf/:id)
 * read and write documents with plain statements over this list: one round trip each, and no query
 * building or entity mapping on every request.
 */
const DOCUMENT_COLUMNS = `id, tenant_id, document_id, document_type, schema_id, sdf_version, is_signed, status,
  file_size_bytes, signature_algorithm, storage_key, idempotency_key, validation, validated_at, signing_error, validation_error,
  summary, summarized_at, created_at, updated_at`;

type DocumentRow = Omit<SdfDocument, 'file_size_bytes' | 'meta'> & { file_size_bytes: string | number };

/** A row as the entity has it: bigint sizes come back from pg as strings (far below 2^53). */
function toDocument(row: DocumentRow): SdfDocument {
  return Object.assign(new SdfDocument(), row, { file_size_bytes: Number(row.file_size_bytes) });
}

/** The outbox INSERT of a statement that changes a document `d` (the event exists iff the change does). */
const OUTBOX_FROM = (alias: string, first: number) =>
  `INSERT INTO outbox_events (id, tenant_id, event, payload, trace_metadata, dispatched_at)
     SELECT $${first}::uuid, ${alias}.tenant_id, $${first + 1}, $${first + 2}::jsonb, $${first + 3},
            ${dispatchedAtSql(`${alias}.tenant_id`, `$${first + 1}`)} FROM ${alias}`;
const outboxParams = (e: OutboxRow) => [e.id, e.event, JSON.stringify(e.payload), e.traceMetadata];

/** A pending record as a validation settles it: what its event is built from. */
export type SettledRecord = PendingRecord & Pick<SdfDocument, 'status' | 'is_signed' | 'signature_algorithm'>;

/** What the signing job reads of a document: enough to sign its file, settle it and describe the event. */
export type SigningRecord = Pick<
  SdfDocument,
  | 'id'
  | 'tenant_id'
  | 'document_id'
  | 'document_type'
  | 'schema_id'
  | 'status'
  | 'is_signed'
  | 'storage_key'
  | 'file_size_bytes'
>;

/** Every document query takes the tenant (S5); the one exception is named for the sweeper that needs it. */
@Injectable()
export class DocumentsRepository {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  async findForTenant(tenantId: string, id: string, m?: EntityManager): Promise<SdfDocument | null> {
    const rows = await preparedQuery<DocumentRow>(
      this.ds,
      'sdf_document_by_id',
      `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE tenant_id = $1 AND id = $2`,
      [tenantId, id],
      m,
    );
    return rows[0] ? toDocument(rows[0]) : null;
  }

  /**
   * The signing job's one read: the document and, beside it, the tenant's active signing key as stored
   * (sealed). `key` is null when the tenant has none.
   */
  async findWithActiveKey(
    tenantId: string,
    id: string,
  ): Promise<{ doc: SigningRecord; key: SealedSigningKey | null } | null> {
    const [row] = await preparedQuery<
      Omit<SigningRecord, 'file_size_bytes'> & {
        file_size_bytes: string;
        key_id: string | null;
        key_algorithm: SignatureAlgorithmName | null;
        private_key_enc: string | null;
      }
    >(
      this.ds,
      'sdf_document_with_active_key',
      `SELECT d.id, d.tenant_id, d.document_id, d.document_type, d.schema_id, d.status, d.is_signed, d.storage_key,
              d.file_size_bytes, k.key_id, k.algorithm AS key_algorithm, k.private_key_enc
         FROM documents d LEFT JOIN signing_keys k ON k.tenant_id = d.tenant_id AND k.is_active
        WHERE d.tenant_id = $1 AND d.id = $2
        LIMIT 1`,
      [tenantId, id],
    );
    if (!row) return null;
    const { key_id, key_algorithm, private_key_enc, ...doc } = row;
    return {
      doc: { ...doc, file_size_bytes: Number(doc.file_size_bytes) },
      key:
        key_id && key_algorithm && private_key_enc
          ? { tenant_id: doc.tenant_id, key_id, algorithm: key_algorithm, private_key_enc }
          : null,
    };
  }

  /** The meta column alone (it is not selected by the other lookups): GET /meta/:id. */
  async findMetaForTenant(tenantId: string, id: string): Promise<Record<string, unknown> | null> {
    const rows = (await this.ds.query('SELECT meta FROM documents WHERE tenant_id = $1 AND id = $2', [
      tenantId,
      id,
    ])) as { meta: Record<string, unknown> }[];
    return rows[0]?.meta ?? null;
  }

  async findByIdempotencyKey(tenantId: string, key: string): Promise<SdfDocument | null> {
    const rows = (await this.ds.query(
      `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE tenant_id = $1 AND idempotency_key = $2`,
      [tenantId, key],
    )) as DocumentRow[];
    return rows[0] ? toDocument(rows[0]) : null;
  }

  /**
   * S2 + S11: the pending record, its audit entry and its event in one statement (atomic as one, and
   * one round trip instead of a transaction of five). A duplicate Idempotency-Key fails it whole.
   */
  async insertUploaded(
    doc: Pick<SdfDocument, 'id' | 'tenant_id' | 'document_id' | 'document_type' | 'schema_id' | 'sdf_version'> &
      Pick<SdfDocument, 'file_size_bytes' | 'storage_key' | 'idempotency_key' | 'meta'>,
    audit: Pick<AuditRecord, 'action' | 'actor' | 'ipAddress' | 'metadata'>,
    event: OutboxRow,
  ): Promise<SdfDocument> {
    const rows = await preparedQuery<DocumentRow>(
      this.ds,
      'sdf_document_insert_uploaded',
      `WITH d AS (
         INSERT INTO documents (id, tenant_id, document_id, document_type, schema_id, sdf_version, file_size_bytes,
           storage_key, idempotency_key, meta)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         RETURNING ${DOCUMENT_COLUMNS}
       ), a AS (
         INSERT INTO audit_log (tenant_id, action, resource_id, actor, ip_address, metadata)
           SELECT d.tenant_id, $11, d.id, $12, $13, $14::jsonb FROM d
       ), e AS (${OUTBOX_FROM('d', 15)})
       SELECT * FROM d`,
      [
        doc.id,
        doc.tenant_id,
        doc.document_id,
        doc.document_type,
        doc.schema_id,
        doc.sdf_version,
        doc.file_size_bytes,
        doc.storage_key,
        doc.idempotency_key,
        JSON.stringify(doc.meta),
        audit.action,
        audit.actor,
        audit.ipAddress ?? null,
        JSON.stringify(audit.metadata ?? {}),
        ...outboxParams(event),
      ],
    );
    return toDocument(rows[0]!);
  }

  /**
   * S3/S9: the job's one write, conditional on the document still being pending, so a repeated or
   * late run changes nothing. Returns the updated row, or null when there was nothing to settle.
   */
  async settleValidation(
    tenantId: string,
    id: string,
    outcome: ValidationOutcome,
    pending: PendingRecord,
    event: (doc: SettledRecord) => OutboxRow,
  ): Promise<SdfDocument | null> {
    // The event describes the row as this statement leaves it, which follows from the pending record
    // (only the job changes a pending row) and the outcome: built before, written with it.
    const settled: SettledRecord = {
      ...pending,
      status: outcome.status,
      is_signed: outcome.isSigned,
      signature_algorithm: outcome.signatureAlgorithm,
      document_type: pending.document_type ?? outcome.documentType,
      sdf_version: outcome.sdfVersion ?? pending.sdf_version,
    };
    const rows = await preparedQuery<DocumentRow>(
      this.ds,
      'sdf_document_settle_validation',
      `WITH d AS (
         UPDATE documents
            SET status = $3, is_signed = $4, signature_algorithm = $5,
                document_type = COALESCE(document_type, $6), sdf_version = COALESCE($7, sdf_version),
                validation = $8, validated_at = now(), validation_error = NULL, updated_at = now(),
                ${summarySetSql(9)}
          WHERE tenant_id = $1 AND id = $2 AND status = 'pending'
          RETURNING ${DOCUMENT_COLUMNS}
       ), e AS (${OUTBOX_FROM('d', 9 + SUMMARY_PARAM_COUNT)})
       SELECT * FROM d`,
      [
        tenantId,
        id,
        outcome.status,
        outcome.isSigned,
        outcome.signatureAlgorithm,
        outcome.documentType,
        outcome.sdfVersion,
        JSON.stringify(outcome.validation),
        ...summaryParams(outcome.summary),
        ...outboxParams(event(settled)),
      ],
    );
    return rows[0] ? toDocument(rows[0]) : null;
  }

  /**
   * S3/S9: the signing job's write, its document.signed event and (when `meterStorage`, M3) the growth of
   * bytes stored as a `storage_changes` row in one statement, conditional on the document still being
   * `valid` and unsigned, so a repeated or late run changes nothing. Returns
   * whether it settled (false: nothing to settle). In the caller's transaction (a
   * `preparedTransaction`), the row stays locked until it commits: the caller stores the signed file
   * meanwhile.
   */
  async settleSigning(
    query: PreparedRunner,
    doc: SigningRecord,
    outcome: { signatureAlgorithm: SignatureAlgorithmName; fileSizeBytes: number; meterStorage: boolean },
    event: (doc: SigningRecord) => OutboxRow,
  ): Promise<boolean> {
    const settled: SigningRecord = {
      ...doc,
      status: 'signed',
      is_signed: true,
      file_size_bytes: outcome.fileSizeBytes,
    };
    const rows = await query(
      'sdf_document_settle_signing',
      `WITH d AS (
         UPDATE documents
            SET status = 'signed', is_signed = true, signature_algorithm = $3, file_size_bytes = $4,
                signing_error = NULL, updated_at = now()
          WHERE tenant_id = $1 AND id = $2 AND status = 'valid' AND NOT is_signed
          RETURNING id, tenant_id
       ), e AS (${OUTBOX_FROM('d', 5)}
       ), g AS (
         INSERT INTO storage_changes (tenant_id, document_id, delta_bytes)
         SELECT tenant_id, id, $9 FROM d WHERE $9::bigint <> 0
       )
       SELECT id FROM d`,
      [
        doc.tenant_id,
        doc.id,
        outcome.signatureAlgorithm,
        outcome.fileSizeBytes,
        ...outboxParams(event(settled)),
        // M3: the growth is recorded with the signing, for the usage meter to count once (storage_changes).
        outcome.meterStorage ? outcome.fileSizeBytes - doc.file_size_bytes : 0,
      ],
    );
    return rows.length > 0;
  }

  /**
   * Deletes and returns the row (locked first, so a concurrent delete answers 404, not a second event).
   * With `meterStorage` (M3), the bytes it frees are recorded in the same transaction as a negative
   * `storage_changes` row, for the usage meter to count once after the commit.
   */
  async deleteForTenant(
    m: EntityManager,
    tenantId: string,
    id: string,
    options: { meterStorage: boolean },
  ): Promise<SdfDocument | null> {
    const doc = await m
      .createQueryBuilder(SdfDocument, 'd')
      .setLock('pessimistic_write')
      .where('d.tenant_id = :tenantId AND d.id = :id', { tenantId, id })
      .getOne();
    if (!doc) return null;
    await m.delete(SdfDocument, { tenant_id: tenantId, id });
    if (options.meterStorage && doc.file_size_bytes !== 0) {
      await m.query(`INSERT INTO storage_changes (tenant_id, document_id, delta_bytes) VALUES ($1, $2, $3)`, [
        tenantId,
        id,
        -doc.file_size_bytes,
      ]);
    }
    return doc;
  }

  /**
   * S4: one page of the tenant's documents in the filter's order after the cursor position, with the
   * search over the summaries (documents-search.ts); asks for one extra row.
   */
  async listPage(tenantId: string, filter: SearchFilter): Promise<{ rows: ListRow[]; hasMore: boolean }> {
    if (!usesSearchIndexes(filter)) {
      const { sql, params } = listPageSql(tenantId, filter);
      const rows = (await this.ds.query(sql, params)) as ListRow[];
      return { rows: rows.slice(0, filter.limit), hasMore: rows.length > filter.limit };
    }
    // A search, in two steps in one transaction. Row-level security would keep the search indexes
    // unused (PostgreSQL applies the tenant policy before any condition that is not leak-proof, and
    // LIKE, full-text, array and numeric matches are not), so a search would read every document.
    // 1. The page's ids and keys are found as the search role, which reads the search columns of every
    //    tenant's documents with the indexes, under the condition `tenant_id = $1` naming the tenant the
    //    request authenticated as (listPageSql), and nothing else of a document. An amount range is counted
    //    first, as the search role too (amountRangeCountSql): its index leads only where the range is narrow.
    // 2. The rows are read back as the connection's own role, by primary key (leak-proof, so indexed)
    //    under the tenant policy. Row-level security still decides which rows are returned: an id of
    //    another tenant, however step 1 came by it, is not seen here and drops out of the page.
    return this.ds.transaction(async (m) => {
      const keys = (await asSearchRole(m, async () => {
        let amount: AmountPlan = 'lead';
        if (hasAmountRange(filter)) {
          const count = amountRangeCountSql(tenantId, filter);
          const [{ n }] = (await m.query(count.sql, count.params)) as [{ n: number }];
          amount = amountPlan(filter, n);
        }
        const { sql, params } = listPageSql(tenantId, filter, 'keys', amount);
        return m.query(sql, params);
      })) as PageKey[];
      const page = keys.slice(0, filter.limit);
      if (page.length === 0) return { rows: [], hasMore: false };
      const found = (await m.query(PAGE_ROWS_SQL, [page.map((k) => k.id), tenantId])) as Omit<ListRow, 'sort_key'>[];
      const byId = new Map(found.map((row) => [row.id, row]));
      const rows = page.flatMap((k) => {
        const row = byId.get(k.id);
        return row ? [{ ...row, sort_key: k.sort_key }] : [];
      });
      return { rows, hasMore: keys.length > filter.limit };
    });
  }

  /** S9, sweeper only (spans tenants on purpose): documents pending for longer than `olderThanMs`. */
  /** Why a validation job gave up; only on a document still pending. */
  async recordValidationFailure(tenantId: string, id: string, failure: SigningError): Promise<void> {
    await this.ds.query(
      `UPDATE documents SET validation_error = $3, updated_at = now()
        WHERE tenant_id = $1 AND id = $2 AND status = 'pending'`,
      [tenantId, id, JSON.stringify(failure)],
    );
  }

  async findStalePendingAcrossTenants(olderThanMs: number, limit: number): Promise<PendingRecord[]> {
    return (await this.ds.query(
      `SELECT id, tenant_id, storage_key, document_id, document_type, schema_id, sdf_version FROM documents
        WHERE status = 'pending' AND created_at < now() - ($1::double precision * interval '1 millisecond')
        ORDER BY created_at LIMIT $2`,
      [olderThanMs, limit],
    )) as PendingRecord[];
  }
}

/**
 * Runs `work` in the transaction of `m` as the search role (SET LOCAL ROLE), and switches back to the
 * connection's own role (RESET ROLE: its starting role, the application role) before anything else runs,
 * whether `work` succeeded or not. When `work` failed the transaction is aborted and the switch back
 * fails too: the transaction is then rolled back, which undoes the SET LOCAL, and `work`'s error is the
 * one reported. Either way the connection never returns to the pool as the search role.
 */
async function asSearchRole<T>(m: EntityManager, work: () => Promise<T>): Promise<T> {
  await m.query(`SET LOCAL ROLE ${SEARCH_ROLE}`);
  let failed = false;
  try {
    return await work();
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    await m.query(`RESET ROLE`).catch((err: unknown) => {
      if (!failed) throw err;
    });
  }
}
