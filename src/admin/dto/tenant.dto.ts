import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
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
import { RETURN_PATH_PATTERN } from '../../saml/return-path.js';
import { TenantPlanFieldsDto } from '../../billing/dto/billing.dto.js';
import { EX } from '../../openapi/examples.js';
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

/** `plan` and `limits` (from TenantPlanFieldsDto) exist on the managed deployment only (M3). */
export class UpdateTenantDto extends TenantPlanFieldsDto {
  @ApiPropertyOptional({ example: 'Acme AG' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 1_000_000, example: 120 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  rate_limit_rpm?: number;

  @ApiPropertyOptional({ example: true })
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

  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    description: 'IdP metadata XML, for an identity provider without a metadata URL (the URL wins when both are set)',
    example:
      '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example.com">…</md:EntityDescriptor>',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @MinLength(1)
  @MaxLength(500_000)
  saml_metadata_xml?: string | null;

  @ApiPropertyOptional({
    description: 'Accept IdP-initiated login (a response without InResponseTo); default false',
    example: false,
  })
  @IsOptional()
  @IsBoolean()
  saml_idp_initiated?: boolean;

  @ApiPropertyOptional({
    type: [String],
    example: ['/app/', '/welcome'],
    description: 'Return paths a RelayState may name: exactly, or under one ending in "/"',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @MaxLength(256, { each: true })
  @Matches(RETURN_PATH_PATTERN, { each: true, message: 'each return path must be an absolute path such as /app/' })
  saml_return_paths?: string[];
}

export class TenantDto {
  @ApiProperty({ format: 'uuid', example: EX.tenantId }) id: string;
  @ApiProperty({ example: 'Acme GmbH' }) name: string;
  @ApiProperty({ example: 'acme' }) slug: string;
  @ApiProperty({ type: 'integer', example: 60, description: 'Requests per minute, shared by every API instance' })
  rate_limit_rpm: number;
  @ApiProperty({ example: false }) saml_enabled: boolean;
  @ApiProperty({ type: 'string', nullable: true, example: 'https://idp.example.com/metadata' })
  saml_metadata_url: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: 'https://sdf.example.com/saml/acme' })
  saml_entity_id: string | null;
  @ApiProperty({ example: false, description: 'IdP metadata XML is stored (it is never returned)' })
  saml_metadata_xml_set: boolean;
  @ApiProperty({ example: false }) saml_idp_initiated: boolean;
  @ApiProperty({ type: [String], example: ['/app/'] }) saml_return_paths: string[];
  @ApiProperty({ type: 'string', nullable: true, example: 'https://idp.example.com/sso/saml' })
  saml_idp_sso_url: string | null;
  @ApiProperty({ type: 'integer', example: 1, description: 'signing certificates of the IdP in the stored metadata' })
  saml_idp_certificates: number;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EX.updatedAt })
  saml_metadata_refreshed_at: string | null;
  @ApiProperty({
    type: 'string',
    nullable: true,
    example: null,
    description: 'the last refresh failure (the last good copy stays)',
  })
  saml_metadata_error: string | null;
  @ApiProperty({
    type: [String],
    example: ['10.20.0.0/16', 'erp.corp.internal'],
    description: 'non-public networks and host names the connectors may reach (managed deployment; operator-set)',
  })
  connector_private_targets: string[];
  @ApiProperty({ format: 'date-time', example: EX.createdAt }) created_at: string;

  static from(t: Tenant): TenantDto {
    return {
      id: t.id,
      name: t.name,
      slug: t.slug,
      rate_limit_rpm: t.rate_limit_rpm,
      saml_enabled: t.saml_enabled,
      saml_metadata_url: t.saml_metadata_url,
      saml_entity_id: t.saml_entity_id,
      saml_metadata_xml_set: t.saml_metadata_xml !== null,
      saml_idp_initiated: t.saml_idp_initiated,
      saml_return_paths: t.saml_return_paths,
      connector_private_targets: t.connector_private_targets,
      saml_idp_sso_url: t.saml_idp_sso_url,
      saml_idp_certificates: t.saml_idp_certificates.length,
      saml_metadata_refreshed_at: t.saml_metadata_refreshed_at?.toISOString() ?? null,
      saml_metadata_error: t.saml_metadata_error,
      created_at: t.created_at.toISOString(),
    };
  }
}

/** The operator's list of non-public targets a tenant's connectors may reach (managed deployment). */
export class ConnectorPrivateTargetsDto {
  @ApiProperty({
    type: [String],
    example: ['10.20.0.0/16', 'erp.corp.internal'],
    description:
      'Networks in CIDR notation (no wider than /8 for IPv4, /32 for IPv6) and host names; the whole list, ' +
      'replacing the stored one; empty to refuse every non-public address again',
  })
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(253, { each: true })
  targets: string[];
}
