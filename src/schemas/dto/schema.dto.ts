import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsObject, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import type { RegisteredSchema } from '../entities/registered-schema.entity.js';

/** S14: `<type>/v<version>`, e.g. `invoice/v1` or `nomination/v2.1`. */
export const SCHEMA_ID_PATTERN = /^[a-z0-9][a-z0-9_-]*\/v\d+(\.\d+)*$/;
export const SCHEMA_ID_MAX_LENGTH = 200;
export const SCHEMA_VERSION_MAX_LENGTH = 64;
/** Printable characters only: a version travels in query strings and logs. */
export const SCHEMA_VERSION_PATTERN = /^[\x21-\x7e]+$/;

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

  static from(row: RegisteredSchema): SchemaSummaryDto {
    return { schema_id: row.schema_id, version: row.version, created_at: row.created_at.toISOString() };
  }
}

export class SchemaListDto {
  @ApiProperty({ type: [SchemaSummaryDto], description: 'Newest first' })
  schemas: SchemaSummaryDto[];
}
