import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsISO8601, IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { DOCUMENT_STATUSES, type DocumentStatus } from '../entities/document.entity.js';

/** GET /list query (S4): limit 1..100 (default 20), opaque cursor, status, type and upload-time filters. */
export class ListDocumentsQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional({ description: 'next_cursor of the previous page' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  cursor?: string;

  @ApiPropertyOptional({ example: 'invoice' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  document_type?: string;

  @ApiPropertyOptional({ enum: DOCUMENT_STATUSES })
  @IsOptional()
  @IsIn(DOCUMENT_STATUSES)
  status?: DocumentStatus;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-03-01T00:00:00Z',
    description: 'Only documents uploaded at or after this time (ISO 8601; a date alone means its start, UTC)',
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  created_from?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-04-01T00:00:00Z',
    description: 'Only documents uploaded before this time (ISO 8601; a date alone means its start, UTC)',
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  created_before?: string;
}
