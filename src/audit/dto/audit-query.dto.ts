import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsISO8601, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { EX } from '../../openapi/examples.js';

/** GET /v1/audit query (SDF-SPEC Audit query parameters, M4). */
export class AuditQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 200, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;

  @ApiPropertyOptional({ description: 'next_cursor of the previous page (opaque)' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(300)
  cursor?: string;

  @ApiPropertyOptional({
    example: 'upload',
    description: 'Exact action name (GET /v1/audit/actions lists them with their words)',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  action?: string;

  @ApiPropertyOptional({
    description: 'A user id, an API key prefix (sdf_kXXX) or a full actor string (user:<id>, api_key:<prefix>)',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  actor?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Entries at or after this instant' })
  @IsOptional()
  @IsISO8601({ strict: true, strictSeparator: true })
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Entries before this instant' })
  @IsOptional()
  @IsISO8601({ strict: true, strictSeparator: true })
  to?: string;
}

export const AUDIT_ACTOR_KINDS = ['user', 'api_key', 'operator', 'system', 'anonymous'] as const;
export type AuditActorKind = (typeof AUDIT_ACTOR_KINDS)[number];

/** Who acted, in words: read from the organization's own people and keys when the page is answered. */
export class AuditActorDto {
  @ApiProperty({
    enum: AUDIT_ACTOR_KINDS,
    example: 'user',
    description:
      'user: a person of the organization; api_key: one of its API keys; operator: the service operator; ' +
      'system: the service itself (jobs, single sign-on, billing, connectors); anonymous: nobody signed in',
  })
  kind: AuditActorKind;
  @ApiProperty({
    example: 'Ada Lovelace',
    description:
      'What to call the actor: a person\'s name (their address when they gave none; "Removed user" when ' +
      'no longer in the organization), an API key\'s name ("API key" when unnamed or gone), or a plain word ' +
      '("Service operator", "System", "Single sign-on", "Billing", "ERP connector", "Anonymous")',
  })
  name: string;
  @ApiProperty({ type: 'string', nullable: true, example: 'ada@example.com', description: "A person's address" })
  email: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: null, description: "An API key's prefix (sdf_kXXX)" })
  key_prefix: string | null;
}

/** The document an entry concerns, when it concerns one. */
export class AuditDocumentDto {
  @ApiProperty({ format: 'uuid', example: EX.documentId, description: "The service's id of the document" })
  id: string;
  @ApiProperty({
    type: 'string',
    nullable: true,
    example: 'Invoice INV-2026-00142',
    description:
      "The document's title from its summary; null when it has none (not yet validated, data unreadable) or " +
      'when it was deleted (the entry of the deletion itself keeps the title it had)',
  })
  title: string | null;
  @ApiProperty({ example: false, description: 'The document no longer exists' }) deleted: boolean;
}

export class AuditEntryDto {
  @ApiProperty({ format: 'uuid', example: EX.auditEntryId }) id: string;
  @ApiProperty({ example: 'upload' }) action: string;
  @ApiProperty({ example: 'Document uploaded', description: 'The action in words (the name itself when unknown)' })
  action_label: string;
  @ApiProperty({ example: `user:${EX.userId}` }) actor: string;
  @ApiProperty({ type: AuditActorDto }) actor_display: AuditActorDto;
  @ApiProperty({
    type: AuditDocumentDto,
    nullable: true,
    description: 'The document the entry concerns; null when it concerns something else',
  })
  document: AuditDocumentDto | null;
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The id of what the action concerns (a document, a key, a user, ...)',
    example: EX.documentId,
  })
  resource_id: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: '203.0.113.7' }) ip_address: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { document_type: 'invoice', file_size_bytes: 48213 },
  })
  metadata: Record<string, unknown>;
  @ApiProperty({ format: 'date-time', example: EX.createdAt }) created_at: string;
}

export class AuditPageDto {
  @ApiProperty({ type: [AuditEntryDto], description: 'Newest first' }) entries: AuditEntryDto[];
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'Pass as cursor for the next page; null when has_more is false',
    example:
      'eyJ1IjoiMTc3MzU4MTQwMDAwMDAwMCIsImlkIjoiZTdjNGIxYTktMmQ4Zi00YzYzLWI1ZTAtMWE5ZDZmM2M4YjcyIn0.C7PdcUtMHDYtGk6Lyh6ewg',
  })
  next_cursor: string | null;
  @ApiProperty({ example: true }) has_more: boolean;
}

export class AuditActionDto {
  @ApiProperty({ example: 'upload' }) action: string;
  @ApiProperty({ example: 'Document uploaded' }) label: string;
}

export class AuditActionListDto {
  @ApiProperty({ type: [AuditActionDto], description: "Every action an organization's log can hold" })
  actions: AuditActionDto[];
}
