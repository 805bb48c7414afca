import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsISO8601, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';

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
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'login' }) action: string;
  @ApiProperty({ example: 'user:3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b' }) actor: string;
  @ApiProperty({ type: 'string', nullable: true }) resource_id: string | null;
  @ApiProperty({ type: 'string', nullable: true }) ip_address: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) metadata: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class AuditPageDto {
  @ApiProperty({ type: [AuditEntryDto], description: 'Newest first' }) entries: AuditEntryDto[];
  @ApiProperty({ type: 'string', nullable: true }) next_cursor: string | null;
  @ApiProperty() has_more: boolean;
}
