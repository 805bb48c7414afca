import { Body, Controller, Get, Header, Param, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { AuthContext, TenantAuth } from '../auth/auth-context.js';
import { Admin, AdminEndpoint, ClientIp, Public, Tenant, TenantEndpoint } from '../auth/decorators.js';
import { ErrorResponseDto } from '../common/error-response.dto.js';
import { AppError } from '../common/errors.js';
import { UuidPipe } from '../common/uuid.pipe.js';
import { SLUG_PATTERN } from '../admin/dto/tenant.dto.js';
import {
  JwksDto,
  PublicSigningKeyDto,
  PublicSigningKeyListDto,
  RotateSigningKeyDto,
  publicJwkOf,
} from './dto/signing-key.dto.js';
import { SigningKeysService } from './signing-keys.service.js';

type AdminAuth = Extract<AuthContext, { kind: 'admin' }>;

/** S8: an operator rotates a tenant's signing key. */
@ApiTags('admin')
@AdminEndpoint()
@Controller('admin/tenants/:tenantId/signing-keys')
export class SigningKeysAdminController {
  constructor(private readonly keys: SigningKeysService) {}

  @Post()
  @ApiOperation({ summary: 'Rotate: create a new active signing key; earlier keys stay for verification' })
  @ApiCreatedResponse({ type: PublicSigningKeyDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  async rotate(
    @Param('tenantId', UuidPipe) tenantId: string,
    @Body() body: RotateSigningKeyDto,
    @Admin() auth: AdminAuth,
    @ClientIp() ip: string | null,
  ): Promise<PublicSigningKeyDto> {
    return PublicSigningKeyDto.from(await this.keys.rotate(tenantId, body.algorithm, { actor: auth.actor, ip }));
  }
}

/** S8: the tenant's own view of its public keys. */
@ApiTags('signing')
@TenantEndpoint()
@Controller('keys')
export class SigningKeysController {
  constructor(private readonly keys: SigningKeysService) {}

  @Get()
  @ApiOperation({ summary: "The tenant's public signing keys, active and rotated, newest first" })
  @ApiOkResponse({ type: PublicSigningKeyListDto })
  async list(@Tenant() auth: TenantAuth): Promise<PublicSigningKeyListDto> {
    return { keys: (await this.keys.listForTenant(auth.tenantId)).map((k) => PublicSigningKeyDto.from(k)) };
  }
}

/** S8: recipients fetch a tenant's public keys without credentials to verify signatures offline. */
@ApiTags('signing')
@Controller('.well-known/sdf-keys')
export class JwksController {
  constructor(private readonly keys: SigningKeysService) {}

  @Get(':tenantSlug')
  @Public()
  @Header('Cache-Control', 'public, max-age=300')
  @ApiOperation({ summary: "A tenant's public signing keys as a JWKS (RFC 7517), rotated keys included" })
  @ApiOkResponse({ type: JwksDto })
  @ApiNotFoundResponse({ description: 'Unknown tenant slug', type: ErrorResponseDto })
  async jwks(@Param('tenantSlug') slug: string): Promise<JwksDto> {
    if (!SLUG_PATTERN.test(slug)) throw AppError.notFound('Tenant');
    return { keys: (await this.keys.listForSlug(slug)).map((k) => publicJwkOf(k)) };
  }
}
