import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsObject, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { SUMMARY_LIMITS, SUMMARY_MAPPING_LIMITS } from '../../sdf/summary.js';
import type { RegisteredSchema } from '../entities/registered-schema.entity.js';

/** S14: `<type>/v<version>`, e.g. `invoice/v1` or `nomination/v2.1`. */
export const SCHEMA_ID_PATTERN = /^[a-z0-9][a-z0-9_-]*\/v\d+(\.\d+)*$/;
export const SCHEMA_ID_MAX_LENGTH = 200;
export const SCHEMA_VERSION_MAX_LENGTH = 64;
/** Printable characters only: a version travels in query strings and logs. */
export const SCHEMA_VERSION_PATTERN = /^[\x21-\x7e]+$/;

const POINTERS: { type: [StringConstructor]; minItems: number; maxItems: number } = {
  type: [String],
  minItems: 1,
  maxItems: SUMMARY_MAPPING_LIMITS.pointers,
};

const SUMMARY_MAPPING_EXAMPLE = {
  label: 'Freight bill',
  number: ['/bill/no'],
  counterparty: ['/shipper/name', '/shipper'],
  amount: ['/charges/total'],
  currency: ['/charges/currency'],
  issue_date: ['/bill/date'],
  due_date: ['/payment/due'],
  references: ['/orders'],
};

/**
 * A summary mapping: per summary field, a list of JSON pointers (RFC 6901) into data.json tried in order (at most 8, each at most 200 characters and 16 reference tokens). A party pointer may point at
 * a name or at an object with a `name`; an amount pointer at a number, a decimal string or an object
 * `{amount, currency}`; a references pointer at a string or a list of strings.
 */
export class SummaryMappingDto {
  @ApiPropertyOptional({
    maxLength: SUMMARY_LIMITS.label,
    example: 'Freight bill',
    description: "The type's name in the title, before the number",
  })
  label?: string;
  @ApiPropertyOptional({ ...POINTERS, description: 'The business number', example: ['/bill/no'] }) number?: string[];
  @ApiPropertyOptional({ ...POINTERS, description: 'The other party', example: ['/shipper/name', '/shipper'] })
  counterparty?: string[];
  @ApiPropertyOptional({ ...POINTERS, description: 'The gross total', example: ['/charges/total'] }) amount?: string[];
  @ApiPropertyOptional({ ...POINTERS, description: 'Its ISO 4217 currency code', example: ['/charges/currency'] })
  currency?: string[];
  @ApiPropertyOptional({ ...POINTERS, description: 'The issue date (YYYY-MM-DD)', example: ['/bill/date'] })
  issue_date?: string[];
  @ApiPropertyOptional({ ...POINTERS, description: 'The due date (YYYY-MM-DD)', example: ['/payment/due'] })
  due_date?: string[];
  @ApiPropertyOptional({
    ...POINTERS,
    description: 'Business numbers of other documents this one names',
    example: ['/orders'],
  })
  references?: string[];
}

export class CreateSchemaDto {
  @ApiProperty({ example: 'invoice/v1', pattern: SCHEMA_ID_PATTERN.source, maxLength: SCHEMA_ID_MAX_LENGTH })
  @IsString()
  @MaxLength(SCHEMA_ID_MAX_LENGTH)
  @Matches(SCHEMA_ID_PATTERN, { message: 'schema_id must have the form <type>/v<version>, e.g. invoice/v1' })
  schema_id: string;

  @ApiProperty({ example: '1.0.0', maxLength: SCHEMA_VERSION_MAX_LENGTH, description: 'Revision of this schema id' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(SCHEMA_VERSION_MAX_LENGTH)
  @Matches(SCHEMA_VERSION_PATTERN, { message: 'version must be printable ASCII without spaces' })
  version: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'A JSON Schema (Draft 2020-12); must compile, and every $ref must resolve inside it',
    example: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      required: ['invoice_number'],
      properties: { invoice_number: { type: 'string' } },
    },
  })
  @IsObject()
  schema: Record<string, unknown>;

  @ApiPropertyOptional({
    type: () => SummaryMappingDto,
    description:
      'Where documents made against this schema keep the fields of their summary: per field, a list of JSON ' +
      'pointers (RFC 6901) into data.json, tried in order (the first that holds a usable value wins). Used for a document whose meta.json ' +
      "names this schema_id and whose schema.json has this schema's content; fields it does not name come " +
      "from the type's built-in mapping. Unknown fields, malformed pointers and oversized lists are refused (400).",
    example: SUMMARY_MAPPING_EXAMPLE,
  })
  @IsOptional()
  @IsObject()
  summary_mapping?: Record<string, unknown>;
}

export class SchemaVersionQueryDto {
  @ApiPropertyOptional({
    description: 'A registered version; the latest (most recently created) when omitted',
    example: '1.0.0',
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(SCHEMA_VERSION_MAX_LENGTH)
  version?: string;
}

export class SchemaSummaryDto {
  @ApiProperty({ example: 'invoice/v1' }) schema_id: string;
  @ApiProperty({ example: '1.0.0' }) version: string;
  @ApiProperty({ format: 'date-time', example: '2026-03-15T13:30:00.000Z' }) created_at: string;
  @ApiProperty({
    type: () => SummaryMappingDto,
    nullable: true,
    description: 'The summary mapping registered with this version; null when none',
    example: {
      label: 'Freight bill',
      number: ['/bill/no'],
      counterparty: ['/shipper/name', '/shipper'],
      amount: ['/charges/total'],
      currency: ['/charges/currency'],
      issue_date: ['/bill/date'],
      due_date: ['/payment/due'],
      references: ['/orders'],
    },
  })
  summary_mapping: SummaryMappingDto | null;

  static from(row: RegisteredSchema): SchemaSummaryDto {
    return {
      schema_id: row.schema_id,
      version: row.version,
      created_at: row.created_at.toISOString(),
      summary_mapping: row.summary_mapping ?? null,
    };
  }
}

export class SchemaListDto {
  @ApiProperty({ type: [SchemaSummaryDto], description: 'Newest first' })
  schemas: SchemaSummaryDto[];
}
