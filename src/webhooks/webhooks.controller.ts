import { applyDecorators, Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthContext, TenantAuth } from '../auth/auth-context.js';
import { Admin, AdminEndpoint, ClientIp, Tenant, TenantEndpoint } from '../auth/decorators.js';
import { UuidPipe } from '../common/uuid.pipe.js';
import { ApiError, IdParam, JsonBodyErrors } from '../openapi/decorators.js';
import { CreateWebhookDto, WebhookDto, WebhookListDto } from './dto/webhook.dto.js';
import { WebhooksService } from './webhooks.service.js';

type AdminAuth = Extract<AuthContext, { kind: 'admin' }>;

const REGISTRATION =
  'Deliveries are POSTs of the event as JSON, signed with HMAC-SHA256 of the secret in X-SDF-Signature, ' +
  'retried with backoff. The secret is stored encrypted and never returned. Audited.';

/** Registration: the body's checks (S10) and the per-tenant limit. */
const Registration = () =>
  applyDecorators(
    ApiCreatedResponse({ type: WebhookDto }),
    JsonBodyErrors('Bad URL (not http or https; in guarded mode, not a public address), short secret, unknown event', {
      name: 'invalid_url',
      code: 'VALIDATION_ERROR',
      message: 'Invalid webhook URL',
      details: [{ path: '/url', message: 'scheme must be http or https' }],
    }),
    ApiError(409, 'The tenant has WEBHOOKS_PER_TENANT webhooks already', {
      name: 'too_many',
      code: 'CONFLICT',
      message: 'A tenant may register at most 10 webhooks; delete one first',
      details: [{ path: '', message: 'at most 10 webhooks per tenant (WEBHOOKS_PER_TENANT)' }],
    }),
  );

/** A tenant manages its own webhooks with its own credentials. */
@ApiTags('webhooks')
@TenantEndpoint()
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @ApiOperation({ summary: 'Register a webhook; the secret is never returned', description: REGISTRATION })
  @Registration()
  create(@Body() body: CreateWebhookDto, @Tenant() auth: TenantAuth, @ClientIp() ip: string | null) {
    return this.webhooks.create(auth.tenantId, body, { actor: auth.actor, ip });
  }

  @Get()
  @ApiOperation({
    summary: "List the tenant's webhooks",
    description: 'Every webhook of the tenant with its URL and events; never the secret nor its hash.',
  })
  @ApiOkResponse({ type: WebhookListDto })
  async list(@Tenant() auth: TenantAuth): Promise<WebhookListDto> {
    return { webhooks: await this.webhooks.list(auth.tenantId) };
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a webhook; pending deliveries to it are dropped',
    description: 'Nothing more is delivered to it, retries included. Audited.',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @IdParam('id', 'Webhook', "No such webhook for this tenant (another tenant's is 404 too)")
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
  @ApiOperation({
    summary: 'Register a webhook for a tenant; the secret is never returned',
    description: `The operator's way to register a tenant's webhook, as POST /webhooks does for the tenant. ${REGISTRATION}`,
  })
  @Registration()
  @IdParam('tenantId', 'Tenant')
  create(
    @Param('tenantId', UuidPipe) tenantId: string,
    @Body() body: CreateWebhookDto,
    @Admin() auth: AdminAuth,
    @ClientIp() ip: string | null,
  ) {
    return this.webhooks.create(tenantId, body, { actor: auth.actor, ip });
  }

  @Get('tenants/:tenantId/webhooks')
  @ApiOperation({
    summary: "List a tenant's webhooks",
    description: 'Every webhook of the tenant with its URL and events; never the secret nor its hash.',
  })
  @ApiOkResponse({ type: WebhookListDto })
  @IdParam('tenantId', 'Tenant')
  async list(@Param('tenantId', UuidPipe) tenantId: string): Promise<WebhookListDto> {
    return { webhooks: await this.webhooks.listForAdmin(tenantId) };
  }

  @Delete('webhooks/:id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a webhook',
    description: "Deletes any tenant's webhook by its id; pending deliveries to it are dropped. Audited.",
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @IdParam('id', 'Webhook')
  async remove(@Param('id', UuidPipe) id: string, @Admin() auth: AdminAuth, @ClientIp() ip: string | null) {
    await this.webhooks.remove(null, id, { actor: auth.actor, ip });
  }
}
