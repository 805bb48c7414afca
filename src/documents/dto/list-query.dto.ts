import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsISO8601, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { LIST_ORDERS, LIST_SORTS, type ListOrder, type ListSort } from '../documents-search.js';
import { DOCUMENT_STATUSES, type DocumentStatus } from '../entities/document.entity.js';

const AMOUNT = /^-?\d{1,15}(\.\d{1,4})?$/;
// A calendar date; year 0000 does not exist (PostgreSQL refuses it), and IsISO8601 strict refuses 30 February.
const DATE = /^(?!0000)\d{4}-\d{2}-\d{2}$/;
const DateFilter = (description: string, example: string) =>
  applyDecorators(
    ApiPropertyOptional({ format: 'date', example, description }),
    IsOptional(),
    IsString(),
    Matches(DATE, { message: '$property must be a date, YYYY-MM-DD' }),
    IsISO8601({ strict: true }, { message: '$property must be a date, YYYY-MM-DD' }),
  );
const AmountFilter = (description: string, example: string) =>
  applyDecorators(
    ApiPropertyOptional({ type: String, example, description }),
    IsOptional(),
    IsString(),
    Matches(AMOUNT, { message: '$property must be a decimal amount such as 1713.60' }),
  );

/**
 * GET /list query (S4): limit 1..100 (default 20), opaque cursor, status, type and upload-time filters,
 * and the search over the documents' summaries (q, counterparty, amount, dates, references, sort).
 */
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

  @ApiPropertyOptional({
    maxLength: 200,
    example: 'INV-2026-00142',
    description:
      'Words and number fragments, matched against the business number, the issuer and counterparty names and ' +
      'the references; every word must match. Taken as plain text (no operators). Ranked: an exact number ' +
      'first, then documents naming it, then numbers starting with or holding it.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  q?: string;

  @ApiPropertyOptional({ maxLength: 200, example: 'Globex', description: 'Part of the counterparty name' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  counterparty?: string;

  @AmountFilter('Gross total at least this (with `currency`)', '1000.00')
  amount_min?: string;

  @AmountFilter('Gross total at most this (with `currency`)', '2000.00')
  amount_max?: string;

  @ApiPropertyOptional({ example: 'EUR', description: 'ISO 4217 currency of the total; required with an amount range' })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Z]{3}$/, { message: '$property must be an ISO 4217 code such as EUR' })
  currency?: string;

  @DateFilter('Issued on or after this date', '2026-03-01')
  issued_from?: string;

  @DateFilter('Issued on or before this date', '2026-03-31')
  issued_to?: string;

  @DateFilter('Due on or after this date', '2026-04-01')
  due_from?: string;

  @DateFilter('Due on or before this date', '2026-04-30')
  due_to?: string;

  @ApiPropertyOptional({
    maxLength: 100,
    example: 'PO-2026-0815',
    description: 'Only documents that name this business number among their references (exact)',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  references?: string;

  @ApiPropertyOptional({
    enum: LIST_SORTS,
    description:
      'relevance (the default when `q` holds a digit), uploaded (the default otherwise), issue_date, due_date ' +
      'or amount; ' +
      'documents without the field come last',
  })
  @IsOptional()
  @IsIn(LIST_SORTS)
  sort?: ListSort;

  @ApiPropertyOptional({ enum: LIST_ORDERS, default: 'desc' })
  @IsOptional()
  @IsIn(LIST_ORDERS)
  order?: ListOrder;
}
