import { Body, Controller, Get, Header, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthContext, TenantAuth } from '../auth/auth-context.js';
import { Admin, AdminEndpoint, ClientIp, Public, Tenant, TenantEndpoint } from '../auth/decorators.js';
import { AppError } from '../common/errors.js';
import { ApiError, ERRORS, IdParam, JsonBodyErrors, notFound } from '../openapi/decorators.js';
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
  @ApiOperation({
    summary: 'Rotate: create a new active signing key; earlier keys stay for verification',
    description:
      'Generates a key pair (ECDSA-P256 or RSA-2048) whose private half is sealed with the master key and ' +
      'never leaves the service; it signs from now on. Earlier keys become inactive but stay published, so ' +
      'signatures made with them still verify. Audited.',
  })
  @ApiCreatedResponse({ type: PublicSigningKeyDto })
  @IdParam('tenantId', 'Tenant')
  @JsonBodyErrors('An algorithm other than ECDSA-P256 or RSA-2048')
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
  @ApiOperation({
    summary: "The tenant's public signing keys, active and rotated, newest first",
    description:
      'Each key as SPKI PEM and as a public JWK, with its key_id (the kid signatures name) and whether it ' +
      'is the active one. The same keys are published without credentials at /.well-known/sdf-keys/{tenantSlug}.',
  })
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
  @ApiOperation({
    summary: "A tenant's public signing keys as a JWKS (RFC 7517), rotated keys included",
    description:
      'No credentials: recipients of signed files fetch it to verify signatures offline (`sdf verify ' +
      '--jwks-url`). Cacheable for 5 minutes. Rotated keys stay in the set so older signatures still verify.',
  })
  @ApiParam({ name: 'tenantSlug', description: "The tenant's slug", example: 'acme' })
  @ApiOkResponse({ type: JwksDto })
  @ApiError(400, 'A slug holding a NUL character or a lone surrogate', ERRORS.unsafeText)
  @ApiError(404, 'Unknown tenant slug', notFound('Tenant'))
  async jwks(@Param('tenantSlug') slug: string): Promise<JwksDto> {
    if (!SLUG_PATTERN.test(slug)) throw AppError.notFound('Tenant');
    return { keys: (await this.keys.listForSlug(slug)).map((k) => publicJwkOf(k)) };
  }
}
