import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { AuthContext, TenantAuth } from '../auth/auth-context.js';
import { Admin, AdminEndpoint, ClientIp, Tenant, TenantEndpoint } from '../auth/decorators.js';
import { ErrorResponseDto } from '../common/error-response.dto.js';
import { UuidPipe } from '../common/uuid.pipe.js';
import { CreateWebhookDto, WebhookDto, WebhookListDto } from './dto/webhook.dto.js';
import { WebhooksService } from './webhooks.service.js';

type AdminAuth = Extract<AuthContext, { kind: 'admin' }>;

/** A tenant manages its own webhooks with its own credentials. */
@ApiTags('webhooks')
@TenantEndpoint()
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @ApiOperation({ summary: 'Register a webhook; the secret is never returned' })
  @ApiCreatedResponse({ type: WebhookDto })
  @ApiBadRequestResponse({ description: 'Bad URL, short secret, unknown event', type: ErrorResponseDto })
  create(@Body() body: CreateWebhookDto, @Tenant() auth: TenantAuth, @ClientIp() ip: string | null) {
    return this.webhooks.create(auth.tenantId, body, { actor: auth.actor, ip });
  }

  @Get()
  @ApiOperation({ summary: "List the tenant's webhooks" })
  @ApiOkResponse({ type: WebhookListDto })
  async list(@Tenant() auth: TenantAuth): Promise<WebhookListDto> {
    return { webhooks: await this.webhooks.list(auth.tenantId) };
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a webhook; pending deliveries to it are dropped' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  async remove(@Param('id', UuidPipe) id: string, @Tenant() auth: TenantAuth, @ClientIp() ip: string | null) {
    await this.webhooks.remove(auth.tenantId, id, { actor: auth.actor, ip });
  }
}

/** SDF-SPEC Admin endpoints: an operator registers webhooks for a tenant. */
@ApiTags('admin')
@AdminEndpoint()
@Controller('admin')
export class AdminWebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post('tenants/:tenantId/webhooks')
  @ApiOperation({ summary: 'Register a webhook for a tenant; the secret is never returned' })
  @ApiCreatedResponse({ type: WebhookDto })
  @ApiBadRequestResponse({ description: 'Bad URL, short secret, unknown event', type: ErrorResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  create(
    @Param('tenantId', UuidPipe) tenantId: string,
    @Body() body: CreateWebhookDto,
    @Admin() auth: AdminAuth,
    @ClientIp() ip: string | null,
  ) {
    return this.webhooks.create(tenantId, body, { actor: auth.actor, ip });
  }

  @Get('tenants/:tenantId/webhooks')
  @ApiOperation({ summary: "List a tenant's webhooks" })
  @ApiOkResponse({ type: WebhookListDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  async list(@Param('tenantId', UuidPipe) tenantId: string): Promise<WebhookListDto> {
    return { webhooks: await this.webhooks.listForAdmin(tenantId) };
  }

  @Delete('webhooks/:id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a webhook' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  async remove(@Param('id', UuidPipe) id: string, @Admin() auth: AdminAuth, @ClientIp() ip: string | null) {
    await this.webhooks.remove(null, id, { actor: auth.actor, ip });
  }
}
