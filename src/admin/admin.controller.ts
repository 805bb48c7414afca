import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context.js';
import { Admin, AdminEndpoint, ClientIp } from '../auth/decorators.js';
import { ErrorResponseDto } from '../common/error-response.dto.js';
import { UuidPipe } from '../common/uuid.pipe.js';
import { AdminService } from './admin.service.js';
import { ApiKeyListDto, CreateApiKeyDto, CreatedApiKeyDto } from './dto/api-key.dto.js';
import { CreateTenantDto, TenantDto, UpdateTenantDto } from './dto/tenant.dto.js';

type AdminAuth = Extract<AuthContext, { kind: 'admin' }>;

@ApiTags('admin')
@AdminEndpoint()
@Controller('admin')
export class AdminController {
  constructor(private readonly admin: AdminService) {}

  @Post('tenants')
  @ApiOperation({ summary: 'Create a tenant' })
  @ApiCreatedResponse({ type: TenantDto })
  @ApiConflictResponse({ description: 'Slug already taken', type: ErrorResponseDto })
  createTenant(@Body() body: CreateTenantDto, @Admin() auth: AdminAuth, @ClientIp() ip: string | null) {
    return this.admin.createTenant(body, { actor: auth.actor, ip });
  }

  @Get('tenants/:tenantId')
  @ApiOperation({ summary: 'Read a tenant' })
  @ApiOkResponse({ type: TenantDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  getTenant(@Param('tenantId', UuidPipe) tenantId: string) {
    return this.admin.getTenant(tenantId);
  }

  @Patch('tenants/:tenantId')
  @ApiOperation({
    summary: 'Update name, rate limit, SAML settings or (managed deployment) plan and limits of a tenant',
  })
  @ApiOkResponse({ type: TenantDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  updateTenant(
    @Param('tenantId', UuidPipe) tenantId: string,
    @Body() body: UpdateTenantDto,
    @Admin() auth: AdminAuth,
    @ClientIp() ip: string | null,
  ) {
    return this.admin.updateTenant(tenantId, body, { actor: auth.actor, ip });
  }

  @Post('tenants/:tenantId/keys')
  @ApiOperation({ summary: 'Create an API key; the raw key is returned only in this response' })
  @ApiCreatedResponse({ type: CreatedApiKeyDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  createKey(
    @Param('tenantId', UuidPipe) tenantId: string,
    @Body() body: CreateApiKeyDto,
    @Admin() auth: AdminAuth,
    @ClientIp() ip: string | null,
  ) {
    return this.admin.createApiKey(tenantId, body, { actor: auth.actor, ip });
  }

  @Get('tenants/:tenantId/keys')
  @ApiOperation({ summary: "List a tenant's API keys (prefixes only, never a hash)" })
  @ApiOkResponse({ type: ApiKeyListDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  async listKeys(@Param('tenantId', UuidPipe) tenantId: string): Promise<ApiKeyListDto> {
    return { keys: await this.admin.listApiKeys(tenantId) };
  }

  @Delete('keys/:keyId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke an API key immediately' })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  async revokeKey(@Param('keyId', UuidPipe) keyId: string, @Admin() auth: AdminAuth, @ClientIp() ip: string | null) {
    await this.admin.revokeApiKey(keyId, { actor: auth.actor, ip });
  }
}
