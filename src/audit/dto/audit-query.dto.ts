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

  @ApiPropertyOptional({ example: 'login', description: 'Exact action name' })
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

export class AuditEntryDto {
  @ApiProperty({ format: 'uuid', example: EX.auditEntryId }) id: string;
  @ApiProperty({ example: 'login' }) action: string;
  @ApiProperty({ example: `user:${EX.userId}` }) actor: string;
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The id of what the action concerns (a document, a key, a user, ...)',
    example: EX.userId,
  })
  resource_id: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: '203.0.113.7' }) ip_address: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, example: { method: 'password' } })
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
