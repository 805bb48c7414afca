import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, IsUrl, MaxLength, MinLength, ValidateIf } from 'class-validator';

export class SsoSettingsDto {
  @ApiProperty({ example: true, description: 'Members may sign in through the identity provider' })
  enabled: boolean;
  @ApiProperty({ type: 'string', nullable: true, example: 'https://idp.example.com/metadata' })
  metadata_url: string | null;
  @ApiProperty({ example: false, description: 'IdP metadata XML is stored (it is never returned)' })
  metadata_xml_set: boolean;
  @ApiProperty({ example: false, description: 'Sign-ins started at the identity provider are accepted' })
  idp_initiated: boolean;
  @ApiProperty({ example: 'https://sdf.example.com/saml/acme', description: 'Our entity id, for the IdP' })
  sp_entity_id: string;
  @ApiProperty({ example: 'https://sdf.example.com/saml/acme/metadata', description: 'Our SP metadata, for the IdP' })
  sp_metadata_url: string;
  @ApiProperty({ example: 'https://sdf.example.com/saml/acme/acs', description: 'Assertion consumer URL (POST)' })
  acs_url: string;
  @ApiProperty({
    example: 'https://sdf.example.com/saml/acme/login?RelayState=%2Fapp%2F',
    description: 'Where a sign-in through the identity provider starts (the portal uses it)',
  })
  login_url: string;
  @ApiProperty({ type: 'string', nullable: true, example: 'https://idp.example.com' })
  idp_entity_id: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: 'https://idp.example.com/sso/saml' })
  idp_sso_url: string | null;
  @ApiProperty({ example: 1, description: 'Signing certificates read from the IdP metadata' })
  idp_certificates: number;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: '2026-03-15T13:30:00.000Z' })
  metadata_refreshed_at: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: null, description: 'Why the last metadata refresh failed' })
  metadata_error: string | null;
}

export class UpdateSsoSettingsDto {
  @ApiPropertyOptional({ example: true })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    example: 'https://idp.example.com/metadata',
    description: 'Where the identity provider publishes its metadata (fetched and checked before it is stored)',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsUrl({ protocols: ['http', 'https'], require_tld: false })
  metadata_url?: string | null;

  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    description: 'The metadata XML itself, for an identity provider without a metadata URL (the URL wins)',
    example:
      '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example.com">…</md:EntityDescriptor>',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @MinLength(1)
  @MaxLength(500_000)
  metadata_xml?: string | null;

  @ApiPropertyOptional({ example: false, description: 'Accept sign-ins started at the identity provider' })
  @IsOptional()
  @IsBoolean()
  idp_initiated?: boolean;
}
