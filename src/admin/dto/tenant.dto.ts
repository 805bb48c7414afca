import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';
import type { Tenant } from '../../tenants/entities/tenant.entity.js';

export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export class CreateTenantDto {
  @ApiProperty({ example: 'Acme GmbH' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  @ApiProperty({ example: 'acme', pattern: SLUG_PATTERN.source, description: 'URL-safe, unique' })
  @IsString()
  @Matches(SLUG_PATTERN, { message: 'slug must be lowercase letters, digits and inner hyphens (1-63 characters)' })
  slug: string;

  @ApiPropertyOptional({ example: 60, minimum: 1, maximum: 1_000_000 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  rate_limit_rpm?: number;
}

export class UpdateTenantDto {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 1_000_000 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  rate_limit_rpm?: number;

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean()
  saml_enabled?: boolean;

  @ApiPropertyOptional({ type: 'string', nullable: true, example: 'https://idp.example.com/metadata' })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsUrl({ protocols: ['http', 'https'], require_tld: false })
  saml_metadata_url?: string | null;

  @ApiPropertyOptional({ type: 'string', nullable: true, example: 'https://sdf.example.com/saml/acme' })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @MinLength(1)
  @MaxLength(1024)
  saml_entity_id?: string | null;
}

export class TenantDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty() rate_limit_rpm: number;
  @ApiProperty() saml_enabled: boolean;
  @ApiProperty({ type: 'string', nullable: true }) saml_metadata_url: string | null;
  @ApiProperty({ type: 'string', nullable: true }) saml_entity_id: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static from(t: Tenant): TenantDto {
    return {
      id: t.id,
      name: t.name,
      slug: t.slug,
      rate_limit_rpm: t.rate_limit_rpm,
      saml_enabled: t.saml_enabled,
      saml_metadata_url: t.saml_metadata_url,
      saml_entity_id: t.saml_entity_id,
      created_at: t.created_at.toISOString(),
    };
  }
}
