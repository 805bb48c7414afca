import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context.js';
import { Admin, AdminEndpoint, ClientIp } from '../auth/decorators.js';
import { UuidPipe } from '../common/uuid.pipe.js';
import { ApiError, IdParam, JsonBodyErrors } from '../openapi/decorators.js';
import { AdminService } from './admin.service.js';
import { ApiKeyListDto, CreateApiKeyDto, CreatedApiKeyDto } from './dto/api-key.dto.js';
import { ConnectorPrivateTargetsDto, CreateTenantDto, TenantDto, UpdateTenantDto } from './dto/tenant.dto.js';

type AdminAuth = Extract<AuthContext, { kind: 'admin' }>;

@ApiTags('admin')
@AdminEndpoint()
@Controller('admin')
export class AdminController {
  constructor(private readonly admin: AdminService) {}

  @Post('tenants')
  @ApiOperation({
    summary: 'Create a tenant',
    description:
      'A tenant with its name, unique slug and rate limit (requests per minute; RATE_LIMIT_DEFAULT_RPM when ' +
      'omitted), and its first signing key. API keys come from POST /admin/tenants/{tenantId}/keys. Audited.',
  })
  @ApiCreatedResponse({ type: TenantDto })
  @JsonBodyErrors('Missing name, malformed slug or rate limit out of range')
  @ApiError(409, 'The slug is taken', {
    name: 'slug_taken',
    code: 'CONFLICT',
    message: "A tenant with slug 'acme' already exists",
  })
  createTenant(@Body() body: CreateTenantDto, @Admin() auth: AdminAuth, @ClientIp() ip: string | null) {
    return this.admin.createTenant(body, { actor: auth.actor, ip });
  }

  @Get('tenants/:tenantId')
  @ApiOperation({
    summary: 'Read a tenant',
    description: 'The tenant with its rate limit and SAML settings (the IdP metadata itself is never returned).',
  })
  @ApiOkResponse({ type: TenantDto })
  @IdParam('tenantId', 'Tenant')
  getTenant(@Param('tenantId', UuidPipe) tenantId: string) {
    return this.admin.getTenant(tenantId);
  }

  @Patch('tenants/:tenantId')
  @ApiOperation({
    summary: 'Update name, rate limit, SAML settings or (managed deployment) plan and limits of a tenant',
    description:
      'Fields not given stay as they are. New SAML metadata (URL or XML) is fetched and checked before it is ' +
      'stored; unusable metadata is 400 and changes nothing. `plan` and `limits` exist on the managed ' +
      'deployment only. Audited.',
  })
  @ApiOkResponse({ type: TenantDto })
  @IdParam('tenantId', 'Tenant')
  @JsonBodyErrors('A field out of range, unusable SAML metadata, or a plan on the self-hosted deployment')
  updateTenant(
    @Param('tenantId', UuidPipe) tenantId: string,
    @Body() body: UpdateTenantDto,
    @Admin() auth: AdminAuth,
    @ClientIp() ip: string | null,
  ) {
    return this.admin.updateTenant(tenantId, body, { actor: auth.actor, ip });
  }

  @Put('tenants/:tenantId/connector-private-targets')
  @ApiOperation({
    summary: "Set the non-public networks and host names a tenant's connectors may reach (managed deployment)",
    description:
      'On the managed deployment a connector reaches public https addresses only. For a tenant whose ERP sits ' +
      'on a private network or a VPN, the operator lists those networks (CIDR) and host names here: a connector ' +
      'URL on the list may be non-public and plain http; every other address stays refused, and the list is ' +
      'checked again on the address each connection resolves to. Replaces the whole list (empty clears it). ' +
      'A tenant cannot set it. Audited with the list before and after.',
  })
  @ApiOkResponse({ type: TenantDto })
  @IdParam('tenantId', 'Tenant')
  @JsonBodyErrors(
    'An entry that is neither a network in CIDR notation nor a host name, a network too wide, or a self-hosted deployment',
    {
      name: 'bad_target',
      code: 'VALIDATION_ERROR',
      message: 'Invalid connector private targets',
      details: [{ path: '/targets/0', message: 'must be a network in CIDR notation (10.20.0.0/16) or a host name' }],
    },
  )
  setConnectorPrivateTargets(
    @Param('tenantId', UuidPipe) tenantId: string,
    @Body() body: ConnectorPrivateTargetsDto,
    @Admin() auth: AdminAuth,
    @ClientIp() ip: string | null,
  ) {
    return this.admin.setConnectorPrivateTargets(tenantId, body.targets, { actor: auth.actor, ip });
  }

  @Post('tenants/:tenantId/keys')
  @ApiOperation({
    summary: 'Create an API key; the raw key is returned only in this response',
    description:
      'The service keeps only a salted hash of the key and its prefix (shown in lists and audit entries); ' +
      'store the raw key now. Optional expiry, in the future. Audited.',
  })
  @ApiCreatedResponse({ type: CreatedApiKeyDto })
  @IdParam('tenantId', 'Tenant')
  @JsonBodyErrors('Missing name, or expires_at malformed or in the past')
  createKey(
    @Param('tenantId', UuidPipe) tenantId: string,
    @Body() body: CreateApiKeyDto,
    @Admin() auth: AdminAuth,
    @ClientIp() ip: string | null,
  ) {
    return this.admin.createApiKey(tenantId, body, { actor: auth.actor, ip });
  }

  @Get('tenants/:tenantId/keys')
  @ApiOperation({
    summary: "List a tenant's API keys (prefixes only, never a hash)",
    description: 'Every key of the tenant with its status (active, expired or revoked), newest first.',
  })
  @ApiOkResponse({ type: ApiKeyListDto })
  @IdParam('tenantId', 'Tenant')
  async listKeys(@Param('tenantId', UuidPipe) tenantId: string): Promise<ApiKeyListDto> {
    return { keys: await this.admin.listApiKeys(tenantId) };
  }

  @Delete('keys/:keyId')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Revoke an API key immediately',
    description: 'The next request with the key is 401. The key stays listed as revoked. Audited.',
  })
  @ApiNoContentResponse({ description: 'Revoked' })
  @IdParam('keyId', 'API key')
  async revokeKey(@Param('keyId', UuidPipe) keyId: string, @Admin() auth: AdminAuth, @ClientIp() ip: string | null) {
    await this.admin.revokeApiKey(keyId, { actor: auth.actor, ip });
  }
}
