import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import type { ApiKey } from '../../auth/entities/api-key.entity.js';
import { EX } from '../../openapi/examples.js';

export class CreateApiKeyDto {
  @ApiProperty({ example: 'ERP integration' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ format: 'date-time', example: '2027-12-31T23:59:59Z' })
  @IsOptional()
  @IsISO8601({ strict: true, strictSeparator: true })
  expires_at?: string;
}

export class ApiKeyDto {
  @ApiProperty({ format: 'uuid', example: EX.apiKeyId }) id: string;
  @ApiProperty({ example: 'sdf_kAbC' }) key_prefix: string;
  @ApiProperty({ type: 'string', nullable: true, example: 'ERP integration' }) name: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EX.expiresAt }) expires_at:
    string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null }) revoked_at: string | null;
  @ApiProperty({ enum: ['active', 'expired', 'revoked'], example: 'active' }) status: 'active' | 'expired' | 'revoked';
  @ApiProperty({ format: 'date-time', example: EX.createdAt }) created_at: string;

  /** Never the hash or the salt: response DTOs are mapped field by field. */
  static from(k: ApiKey, now = Date.now()): ApiKeyDto {
    const status = k.revoked_at ? 'revoked' : k.expires_at && k.expires_at.getTime() <= now ? 'expired' : 'active';
    return {
      id: k.id,
      key_prefix: k.key_prefix,
      name: k.name,
      expires_at: k.expires_at?.toISOString() ?? null,
      revoked_at: k.revoked_at?.toISOString() ?? null,
      status,
      created_at: k.created_at.toISOString(),
    };
  }
}

export class CreatedApiKeyDto {
  @ApiProperty({ format: 'uuid', example: EX.apiKeyId }) id: string;
  @ApiProperty({
    description: 'The raw key. Shown only in this response; store it now.',
    example: 'sdf_kAbC7Jq2xW9vYb3nK7pL0sR4tU8mZ1aC6dEfGhIjKlMn',
  })
  key: string;
  @ApiProperty({ example: 'sdf_kAbC' }) key_prefix: string;
  @ApiProperty({ type: 'string', nullable: true, example: 'ERP integration' }) name: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EX.expiresAt }) expires_at:
    string | null;
  @ApiProperty({ format: 'date-time', example: EX.createdAt }) created_at: string;
}

export class ApiKeyListDto {
  @ApiProperty({ type: [ApiKeyDto] }) keys: ApiKeyDto[];
}
