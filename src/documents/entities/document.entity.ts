import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { DocumentSummary } from '../../sdf/summary.js';
import type { StoredValidation } from '../validation-extensions.js';

export const DOCUMENT_STATUSES = ['pending', 'valid', 'invalid', 'signed'] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

export const SIGNATURE_ALGORITHMS = ['ECDSA-P256', 'RSA-2048'] as const;
export type SignatureAlgorithmName = (typeof SIGNATURE_ALGORITHMS)[number];

/** bigint comes back from pg as a string; sizes stay far below 2^53. */
const bigintAsNumber = { to: (v: number) => v, from: (v: string | null) => (v === null ? null : Number(v)) };

/** Why a job gave up on the document (out of attempts), as GET /sdf/:id shows it. */
export interface SigningError {
  code: string;
  message: string;
  failed_at: string;
  attempts: number;
}

@Entity({ name: 'documents' })
export class SdfDocument {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  // Queries by tenant use documents_tenant_page_idx (tenant_id, created_at, id), made by migration.
  @Column({ type: 'uuid' })
  tenant_id: string;

  /** meta.json's document_id (rule 7), not the record id. */
  @Column({ type: 'text' })
  document_id: string;

  @Column({ type: 'text', nullable: true })
  document_type: string | null;

  @Column({ type: 'text', nullable: true })
  schema_id: string | null;

  @Column({ type: 'text', default: '0.1' })
  sdf_version: string;

  @Column({ type: 'boolean', default: false })
  is_signed: boolean;

  @Column({ type: 'text', default: 'pending' })
  status: DocumentStatus;

  @Column({ type: 'bigint', transformer: bigintAsNumber })
  file_size_bytes: number;

  @Column({ type: 'text', nullable: true })
  signature_algorithm: SignatureAlgorithmName | null;

  @Column({ type: 'text' })
  storage_key: string;

  @Column({ type: 'text', nullable: true })
  idempotency_key: string | null;

  /**
   * F4 service shape of meta.json, read at upload (S2); bounded by the meta.json size limit. Not
   * selected unless asked for (GET /meta/:id), so lookups and lists never carry it.
   */
  @Column({ type: 'jsonb', select: false })
  meta: Record<string, unknown>;

  /** The validation job's result (checks, warnings, error, signature); null while pending. */
  @Column({ type: 'jsonb', nullable: true })
  validation: StoredValidation | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  validated_at: Date | null;

  /** Why the last signing gave up (its job out of attempts); null otherwise. */
  @Column({ type: 'jsonb', nullable: true })
  signing_error: SigningError | null;

  /** Why the last validation gave up (its job out of attempts) while the document stays pending; null otherwise. */
  @Column({ type: 'jsonb', nullable: true })
  validation_error: SigningError | null;

  /**
   * What a person knows the document by (src/sdf/summary.ts), stored when the validation job runs; null
   * while pending, for a file whose data.json does not parse, and until the backfill reaches a document
   * stored before summaries existed. The summary_* columns beside it (search and filters) derive from it.
   */
  @Column({ type: 'jsonb', nullable: true })
  summary: DocumentSummary | null;

  /** When the summary was computed (null: not yet; the backfill looks for these). */
  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  summarized_at: Date | null;

  @Column({ type: 'timestamptz', precision: 3, default: () => 'now()' })
  created_at: Date;

  @Column({ type: 'timestamptz', precision: 3, default: () => 'now()' })
  updated_at: Date;
}
