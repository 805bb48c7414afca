import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import {
  SCHEMA_ID_MAX_LENGTH,
  SCHEMA_ID_PATTERN,
  SCHEMA_VERSION_MAX_LENGTH,
  SCHEMA_VERSION_PATTERN,
} from '../../schemas/dto/schema.dto.js';

const TEXT_MAX = 500;

/** The meta.json fields a producer takes; sdf_version, document_id and created_at are generated (rule 10). */
export class ProduceMetaDto {
  @ApiPropertyOptional({ example: 'invoice', description: "Default: data's `document_type`", maxLength: 100 })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  document_type?: string;

  @ApiProperty({ example: 'Acme Supplies GmbH', maxLength: TEXT_MAX })
  @IsString()
  @IsNotEmpty()
  @MaxLength(TEXT_MAX)
  issuer: string;

  @ApiPropertyOptional({ example: 'DE123456789', maxLength: TEXT_MAX })
  @IsOptional()
  @IsString()
  @MaxLength(TEXT_MAX)
  issuer_id?: string;

  @ApiPropertyOptional({ example: 'Global Logistics AG', maxLength: TEXT_MAX })
  @IsOptional()
  @IsString()
  @MaxLength(TEXT_MAX)
  recipient?: string;

  @ApiPropertyOptional({
    example: 'invoice/v1',
    description: 'Written into meta.json; with a registry `schema_id` in the body, that one is written',
    maxLength: SCHEMA_ID_MAX_LENGTH,
  })
  @IsOptional()
  @IsString()
  @MaxLength(SCHEMA_ID_MAX_LENGTH)
  schema_id?: string;

  @ApiPropertyOptional({ example: 'de-DE', maxLength: 35 })
  @IsOptional()
  @IsString()
  @MaxLength(35)
  locale?: string;
}

/** POST /sdf/produce: data, its schema (given, or a registered one by id), and meta fields. */
export class ProduceDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'data.json: the business data, checked against the schema before anything is made',
    example: {
      document_type: 'invoice',
      invoice_number: 'INV-2026-00142',
      issue_date: '2026-03-15',
      seller: { name: 'Acme GmbH', vat_id: 'DE123456789', address: 'Hafenstrasse 1, 20457 Hamburg' },
      buyer: { name: 'Globex Ltd', vat_id: 'GB987654321', address: '1 Market Street, London' },
      line_items: [
        {
          description: 'Industrial valve Type-A',
          quantity: 50,
          unit_price: { amount: '24.00', currency: 'EUR' },
          subtotal: { amount: '1200.00', currency: 'EUR' },
        },
      ],
      totals: { gross: { amount: '1428.00', currency: 'EUR' } },
    },
  })
  @IsObject()
  data: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'schema.json (JSON Schema Draft 2020-12); give this or `schema_id`',
    example: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      required: ['invoice_number'],
      properties: { invoice_number: { type: 'string' } },
    },
  })
  @IsOptional()
  @IsObject()
  schema?: Record<string, unknown>;

  @ApiPropertyOptional({
    example: 'invoice/v1',
    description: "A schema of the tenant's registry, embedded as schema.json; give this or `schema`",
    pattern: SCHEMA_ID_PATTERN.source,
    maxLength: SCHEMA_ID_MAX_LENGTH,
  })
  @IsOptional()
  @IsString()
  @MaxLength(SCHEMA_ID_MAX_LENGTH)
  @Matches(SCHEMA_ID_PATTERN, { message: 'schema_id must have the form <type>/v<version>, e.g. invoice/v1' })
  schema_id?: string;

  @ApiPropertyOptional({
    example: '1.0.0',
    description: 'A registered version of `schema_id`; the latest when omitted',
    maxLength: SCHEMA_VERSION_MAX_LENGTH,
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(SCHEMA_VERSION_MAX_LENGTH)
  @Matches(SCHEMA_VERSION_PATTERN, { message: 'version must be printable ASCII without spaces' })
  version?: string;

  @ApiProperty({ type: ProduceMetaDto })
  @ValidateNested()
  @Type(() => ProduceMetaDto)
  meta: ProduceMetaDto;

  @ApiPropertyOptional({
    example: true,
    default: false,
    description:
      "Sign the file with the tenant's active key before it is stored: it is then validated with its " +
      'signature and ends `valid` with `is_signed: true`',
  })
  @IsOptional()
  @IsBoolean()
  sign?: boolean;
}
