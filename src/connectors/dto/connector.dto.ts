import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, IsUUID, MaxLength, MinLength } from 'class-validator';
import { EX } from '../../openapi/examples.js';
import { credentialFields, type Credentials } from '../credentials.js';
import {
  AUTH_TYPES,
  ERP_TYPES,
  HEALTH_STATUSES,
  type AuthType,
  type Connector,
  type ErpType,
  type HealthStatus,
} from '../entities/connector.entity.js';

const CREDENTIALS_DESCRIPTION =
  'basic: {username, password}; bearer: {token}; oauth2: {token_url, client_id, client_secret, scope?}. ' +
  'Sealed with the master key; never returned.';

export class ConfigureConnectorDto {
  @ApiProperty({ enum: ERP_TYPES, example: 'SAP' })
  @IsIn(ERP_TYPES)
  erp_type: ErpType;

  @ApiPropertyOptional({ maxLength: 200, example: 'S/4HANA production' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;

  @ApiProperty({ example: 'https://my-s4.example.com', description: 'http(s); https only on the managed deployment' })
  @IsString()
  @MinLength(1)
  @MaxLength(2048)
  base_url: string;

  @ApiProperty({ enum: AUTH_TYPES, example: 'basic' })
  @IsIn(AUTH_TYPES)
  auth_type: AuthType;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    writeOnly: true,
    description: CREDENTIALS_DESCRIPTION,
    example: { username: 'SDF_INTEGRATION', password: 'correct horse battery staple' },
  })
  @IsObject()
  credentials: Record<string, unknown>;

  @ApiPropertyOptional({ default: true, example: true })
  @IsOptional()
  @IsBoolean()
  is_active?: boolean;
}

export class UpdateConnectorDto {
  @ApiPropertyOptional({ maxLength: 200, example: 'S/4HANA production' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ example: 'https://my-s4.example.com' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(2048)
  base_url?: string;

  @ApiPropertyOptional({
    enum: AUTH_TYPES,
    description: 'A new auth_type needs all of its credentials',
    example: 'bearer',
  })
  @IsOptional()
  @IsIn(AUTH_TYPES)
  auth_type?: AuthType;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    writeOnly: true,
    description: 'Fields given replace those stored; the others are kept. ' + CREDENTIALS_DESCRIPTION,
    example: { token: 'eyJhbGciOiJSUzI1NiJ9.erp-token' },
  })
  @IsOptional()
  @IsObject()
  credentials?: Record<string, unknown>;

  @ApiPropertyOptional({ example: false })
  @IsOptional()
  @IsBoolean()
  is_active?: boolean;
}

export class ConnectorDto {
  @ApiProperty({ format: 'uuid', example: EX.connectorId }) id: string;
  @ApiProperty({ format: 'uuid', example: EX.tenantId }) tenant_id: string;
  @ApiProperty({ enum: ERP_TYPES, example: 'SAP' }) erp_type: ErpType;
  @ApiProperty({ type: String, nullable: true, example: 'S/4HANA production' }) name: string | null;
  @ApiProperty({ example: 'https://my-s4.example.com' }) base_url: string;
  @ApiProperty({ enum: AUTH_TYPES, example: 'basic' }) auth_type: AuthType;
  @ApiProperty({
    type: [String],
    description: 'Which credential fields are set (never their values)',
    example: ['password', 'username'],
  })
  credentials_set: string[];
  @ApiProperty({ example: true }) is_active: boolean;
  @ApiProperty({ enum: HEALTH_STATUSES, example: 'healthy' }) health_status: HealthStatus;
  @ApiProperty({ type: String, nullable: true, example: null }) health_reason: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: EX.updatedAt }) last_health_check:
    string | null;
  @ApiProperty({ format: 'date-time', example: EX.createdAt }) created_at: string;

  /** Mapped field by field: the sealed credentials never leave the server. */
  static from(c: Connector, credentials: Credentials): ConnectorDto {
    return {
      id: c.id,
      tenant_id: c.tenant_id,
      erp_type: c.erp_type,
      name: c.name,
      base_url: c.base_url,
      auth_type: c.auth_type,
      credentials_set: credentialFields(credentials),
      is_active: c.is_active,
      health_status: c.health_status,
      health_reason: c.health_reason,
      last_health_check: c.last_health_check?.toISOString() ?? null,
      created_at: c.created_at.toISOString(),
    };
  }
}

export class ConnectorListDto {
  @ApiProperty({ type: [ConnectorDto] }) connectors: ConnectorDto[];
}

export class ConnectorHealthDto {
  @ApiProperty({ format: 'uuid', example: EX.connectorId }) id: string;
  @ApiProperty({ type: String, nullable: true, example: 'S/4HANA production' }) name: string | null;
  @ApiProperty({ enum: ERP_TYPES, example: 'SAP' }) erp_type: ErpType;
  @ApiProperty({ enum: HEALTH_STATUSES, example: 'unhealthy' }) health_status: HealthStatus;
  @ApiProperty({ type: String, nullable: true, example: 'HTTP 401: Unauthorized' }) reason: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: EX.updatedAt }) last_health_check:
    string | null;
}

export class HealthListDto {
  @ApiProperty({ type: [ConnectorHealthDto] }) connectors: ConnectorHealthDto[];
}

export class MatchRequestDto {
  @ApiProperty({ format: 'uuid', description: 'The document record id', example: EX.documentId })
  @IsUUID()
  document_id: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description: "Default: the tenant's first active connector",
    example: EX.connectorId,
  })
  @IsOptional()
  @IsUUID()
  connector_id?: string;
}

export class DifferenceDto {
  @ApiProperty({ example: 'line_items[0].quantity' }) field: string;
  @ApiProperty({ type: String, nullable: true, example: '12' }) sdf: string | null;
  @ApiProperty({ type: String, nullable: true, example: '10' }) erp: string | null;
}

export class MatchResultDto {
  @ApiProperty({ description: 'The ERP document was found and agrees on every compared field', example: false })
  matched: boolean;
  @ApiProperty({ format: 'uuid', example: EX.connectorId }) connector_id: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'id and a summary of the ERP document; null when none has the reference',
    example: { id: '4500012345', type: 'purchase_order', supplier: 'ACME-001', currency: 'EUR', net: 1000, lines: 2 },
  })
  erp_document: Record<string, unknown> | null;
  @ApiProperty({ type: [DifferenceDto] }) differences: DifferenceDto[];
}

export class PushRequestDto {
  @ApiProperty({ format: 'uuid', example: EX.connectorId })
  @IsUUID()
  connector_id: string;
}

export class PushDto {
  @ApiProperty({ format: 'uuid', example: EX.pushId }) push_id: string;
  @ApiProperty({ format: 'uuid', example: EX.connectorId }) connector_id: string;
  @ApiProperty({ format: 'uuid', description: 'The document record id', example: EX.documentId }) document_id: string;
  @ApiProperty({ enum: ['queued', 'running', 'succeeded', 'failed'], example: 'succeeded' }) status: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The ERP's id of the created document",
    example: '5105600123',
  })
  erp_document_id: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The ERP's own message when the push failed",
    example: null,
  })
  error: string | null;
  @ApiProperty({ type: 'integer', example: 1 }) attempts: number;
  @ApiProperty({ format: 'date-time', example: EX.createdAt }) created_at: string;
  @ApiProperty({ format: 'date-time', example: EX.updatedAt }) updated_at: string;
}

export class ErpStatusDto {
  @ApiProperty({ format: 'uuid', description: 'The document record id', example: EX.documentId }) document_id: string;
  @ApiProperty({ type: [PushDto] }) pushes: PushDto[];
}
