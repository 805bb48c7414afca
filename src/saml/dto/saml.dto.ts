import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { EX } from '../../openapi/examples.js';

export class SamlUserDto {
  @ApiProperty({ format: 'uuid', example: EX.userId }) id: string;
  @ApiProperty({ example: 'jane@acme.example' }) email: string;
  @ApiProperty({ example: false, description: 'The user was created by this login (role member)' }) created: boolean;
}

/** C1: the ACS answer without a RelayState (with one, the same tokens travel in a redirect's fragment). */
export class SamlLoginDto {
  @ApiProperty({
    example: EX.accessToken,
    description: 'A tenant JWT for the user',
  })
  access_token: string;
  @ApiProperty({ enum: ['Bearer'], example: 'Bearer' }) token_type: 'Bearer';
  @ApiProperty({ example: 900, description: 'Seconds the access token lives (8 h self-hosted, 15 min managed)' })
  expires_in: number;
  @ApiPropertyOptional({
    example: EX.opaqueToken,
    description: 'Managed deployment only: a refresh token for POST /v1/auth/refresh',
  })
  refresh_token?: string;
  @ApiProperty({ type: SamlUserDto }) user: SamlUserDto;
}

/** C1: the outcome of a refresh of a tenant's IdP metadata. */
export class SamlMetadataStatusDto {
  @ApiProperty({ example: true, description: 'The metadata was fetched and stored' }) refreshed: boolean;
  @ApiProperty({ type: String, nullable: true, example: null, description: 'Why not; the last good copy stays' })
  error: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: EX.updatedAt }) refreshed_at:
    string | null;
  @ApiProperty({ type: String, nullable: true, example: 'https://idp.example.com/sso/saml' }) sso_url: string | null;
  @ApiProperty({ type: 'integer', example: 1, description: 'Signing certificates of the IdP in the metadata' })
  certificates: number;
}
