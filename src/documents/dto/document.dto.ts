import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ErrorPayloadDto } from '../../common/error-response.dto.js';
import { EX } from '../../openapi/examples.js';
import type { DocumentSummary } from '../../sdf/summary.js';
import type { ListRow } from '../documents-search.js';
import { DOCUMENT_STATUSES, SIGNATURE_ALGORITHMS, type SdfDocument } from '../entities/document.entity.js';

const CHECK_VALUES = ['pass', 'fail', 'skipped'];

/** F10: the six checks, each pass, fail or skipped. */
export class ChecksDto {
  @ApiProperty({ enum: CHECK_VALUES, example: 'pass' }) container: string;
  @ApiProperty({ enum: CHECK_VALUES, example: 'pass' }) meta: string;
  @ApiProperty({ enum: CHECK_VALUES, example: 'pass' }) schema: string;
  @ApiProperty({ enum: CHECK_VALUES, example: 'pass' }) data: string;
  @ApiProperty({ enum: CHECK_VALUES, example: 'pass' }) pdf: string;
  @ApiProperty({ enum: CHECK_VALUES, example: 'skipped', description: 'skipped: the file is not signed' })
  signature: string;
}

export class SignatureResultDto {
  @ApiProperty({ example: true }) valid: boolean;
  @ApiProperty({ enum: SIGNATURE_ALGORITHMS, type: String, nullable: true, example: 'ECDSA-P256' }) algorithm:
    string | null;
  @ApiProperty({ type: String, nullable: true, example: EX.keyThumbprint }) key_id: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'date-time', example: EX.updatedAt }) signed_at: string | null;
  @ApiProperty({ description: "true only when the key is one of the tenant's", example: true }) trusted: boolean;
  @ApiPropertyOptional({
    description: 'Why the signature is not valid',
    example: 'the signature does not verify with the key it names',
  })
  reason?: string;
}

/** What `warnings` holds, for both the stored validation and POST /validate. */
export const WARNINGS_DESCRIPTION =
  'What passed with a caveat, one sentence each. Those about what visual.pdf does by itself begin with a ' +
  'code and a colon: PDF_OPEN_ACTION_URI (it contacts an address, named by scheme and host, as soon as it is ' +
  'opened), PDF_AUTO_ACTION_URI (it contacts one on a trigger such as a page opening, without a click), ' +
  'PDF_EMBEDDED_FILE (it embeds a file, named with its size when the file declares it). At most 20 are listed ' +
  'per code, then a count of the rest.';

/** The validation job's result as kept on the record. */
export class StoredValidationDto {
  @ApiProperty({ example: true }) valid: boolean;
  @ApiProperty({ type: ChecksDto }) checks: ChecksDto;
  @ApiProperty({
    type: [String],
    description: WARNINGS_DESCRIPTION,
    example: ['meta.json: sdf_version 0.2 is newer than the supported 0.1; read as 0.1'],
  })
  warnings: string[];
  @ApiProperty({ type: ErrorPayloadDto, nullable: true }) error: ErrorPayloadDto | null;
  @ApiProperty({ type: SignatureResultDto, nullable: true }) signature: SignatureResultDto | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: '3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a',
    description: 'SHA-256 of the embedded schema.json',
  })
  schema_sha256: string | null;
  @ApiProperty({
    type: Boolean,
    nullable: true,
    example: true,
    description: "Whether the embedded schema.json equals the registry's for meta's schema_id; null when not judged",
  })
  registry_match: boolean | null;
}

/**
 * What a person knows the document by, read from data.json (rule 7: meta's document_id is never a
 * business key) with the issuer from meta.json; see docs/documents.md for each type's fields.
 */
export class DocumentSummaryDto {
  @ApiProperty({ example: 'Invoice INV-2026-00142', description: 'Type and business number' }) title: string;
  @ApiProperty({ type: String, nullable: true, example: 'INV-2026-00142', description: 'The business number' })
  number: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Acme GmbH', description: "meta.json's issuer" })
  issuer: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Globex Ltd', description: 'The other party, from data.json' })
  counterparty: string | null;
  @ApiProperty({ type: String, nullable: true, example: '1713.60', description: 'The gross total, a decimal string' })
  amount: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'EUR' }) currency: string | null;
  @ApiProperty({ type: String, format: 'date', nullable: true, example: '2026-03-15' }) issue_date: string | null;
  @ApiProperty({ type: String, format: 'date', nullable: true, example: '2026-04-14' }) due_date: string | null;
  @ApiProperty({
    type: [String],
    example: ['PO-2026-0815'],
    description: "Business numbers of other documents this one names (an invoice's order, a nomination's contract)",
  })
  references: string[];
}

export const SUMMARY_PROPERTY = {
  type: DocumentSummaryDto,
  nullable: true,
  description:
    'What the document is known by; null while pending, when data.json does not parse, and for a document ' +
    'stored before summaries existed until the background backfill reaches it',
} as const;

export function summaryOf(summary: DocumentSummary | null | undefined): DocumentSummaryDto | null {
  if (!summary) return null;
  return {
    title: summary.title,
    number: summary.number,
    issuer: summary.issuer,
    counterparty: summary.counterparty,
    amount: summary.amount,
    currency: summary.currency,
    issue_date: summary.issue_date,
    due_date: summary.due_date,
    references: summary.references,
  };
}

/** SDF-SPEC Document record, as POST /upload answers it. */
export class DocumentDto {
  @ApiProperty({ format: 'uuid', description: 'Record id; the :id of every document path', example: EX.documentId })
  id: string;
  @ApiProperty({ format: 'uuid', description: "meta.json's document_id", example: EX.metaDocumentId })
  document_id: string;
  @ApiProperty({ type: String, nullable: true, example: 'invoice' }) document_type: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'invoice/v1' }) schema_id: string | null;
  @ApiProperty({ example: '0.1' }) sdf_version: string;
  @ApiProperty({ example: false }) is_signed: boolean;
  @ApiProperty({ enum: DOCUMENT_STATUSES, example: 'pending' }) status: string;
  @ApiProperty({ type: 'integer', example: 48213 }) file_size_bytes: number;
  @ApiProperty({ format: 'date-time', example: '2026-03-15T13:30:00.123Z' }) created_at: string;
  @ApiProperty(SUMMARY_PROPERTY) summary: DocumentSummaryDto | null;

  static from(doc: SdfDocument): DocumentDto {
    return {
      id: doc.id,
      document_id: doc.document_id,
      document_type: doc.document_type,
      schema_id: doc.schema_id,
      sdf_version: doc.sdf_version,
      is_signed: doc.is_signed,
      status: doc.status,
      file_size_bytes: doc.file_size_bytes,
      created_at: doc.created_at.toISOString(),
      summary: summaryOf(doc.summary),
    };
  }
}

/** Why signing gave up: the sign job ran out of attempts (the reason in full is in the service log). */
export class SigningErrorDto {
  @ApiProperty({ example: 'SIGNING_FAILED' }) code: string;
  @ApiProperty({ example: 'Signing failed after 3 attempts; POST /sign/:id tries again' }) message: string;
  @ApiProperty({ format: 'date-time', example: EX.updatedAt }) failed_at: string;
  @ApiProperty({ type: 'integer', example: 3 }) attempts: number;
}

/** S1: GET /sdf/:id, the record with its validation result, for polling. */
export class DocumentDetailDto extends DocumentDto {
  @ApiProperty({ enum: SIGNATURE_ALGORITHMS, type: String, nullable: true, example: null }) signature_algorithm:
    string | null;
  @ApiProperty({ format: 'date-time', example: EX.updatedAt }) updated_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: EX.updatedAt }) validated_at:
    string | null;
  @ApiProperty({ type: StoredValidationDto, nullable: true, description: 'null while pending' })
  validation: StoredValidationDto | null;
  @ApiProperty({ type: SigningErrorDto, nullable: true, description: 'set when the last signing gave up' })
  signing_error: SigningErrorDto | null;
  @ApiProperty({
    type: SigningErrorDto,
    nullable: true,
    description:
      'set when validation gave up on a document that stays `pending` (for example its stored file is missing); ' +
      'the service tries it again later and clears this when it settles',
  })
  validation_error: SigningErrorDto | null;

  static fromDetail(doc: SdfDocument): DocumentDetailDto {
    return {
      ...DocumentDto.from(doc),
      signature_algorithm: doc.signature_algorithm,
      updated_at: doc.updated_at.toISOString(),
      validated_at: doc.validated_at?.toISOString() ?? null,
      validation: doc.validation
        ? {
            valid: doc.validation.valid,
            checks: doc.validation.checks,
            warnings: doc.validation.warnings,
            error: doc.validation.error,
            signature: doc.validation.signature,
            schema_sha256: doc.validation.schema_sha256,
            registry_match: doc.validation.registry_match,
          }
        : null,
      signing_error: doc.signing_error ?? null,
      validation_error: doc.validation_error ?? null,
    };
  }
}

export class DocumentListItemDto {
  @ApiProperty({ format: 'uuid', example: EX.documentId }) id: string;
  @ApiProperty({ format: 'uuid', example: EX.metaDocumentId }) document_id: string;
  @ApiProperty({ type: String, nullable: true, example: 'invoice' }) document_type: string | null;
  @ApiProperty({ enum: DOCUMENT_STATUSES, example: 'valid' }) status: string;
  @ApiProperty({ example: false }) is_signed: boolean;
  @ApiProperty({ type: 'integer', example: 48213 }) file_size_bytes: number;
  @ApiProperty({ format: 'date-time', example: EX.createdAt }) created_at: string;
  @ApiProperty(SUMMARY_PROPERTY) summary: DocumentSummaryDto | null;

  static from(doc: ListRow): DocumentListItemDto {
    return {
      id: doc.id,
      document_id: doc.document_id,
      document_type: doc.document_type,
      status: doc.status,
      is_signed: doc.is_signed,
      file_size_bytes: Number(doc.file_size_bytes),
      created_at: new Date(doc.created_at).toISOString(),
      summary: summaryOf(doc.summary),
    };
  }
}

export class DocumentListDto {
  @ApiProperty({ type: [DocumentListItemDto] }) documents: DocumentListItemDto[];
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The cursor of the next page; null when has_more is false',
    example: 'eyJ0IjoiMjAyNi0wMy0xNVQxMzozMDowMC4wMDBaIiwiaWQiOiIwYjVjNGM5ZS00YThkLTRhMmUtOWEzOS0xZDhlOWM2ZjBkMTEifQ',
  })
  next_cursor: string | null;
  @ApiProperty({ example: true }) has_more: boolean;
}
