import { applyDecorators, Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadGatewayResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { TenantAuth } from '../auth/auth-context.js';
import { ClientIp, Tenant, TenantEndpoint } from '../auth/decorators.js';
import { ErrorResponseDto } from '../common/error-response.dto.js';
import { UuidPipe } from '../common/uuid.pipe.js';
import { ApiError, ERRORS, IdParam, JsonBodyErrors, notFound, type ErrorCase } from '../openapi/decorators.js';
import { ConnectorsService } from './connectors.service.js';
import {
  ConfigureConnectorDto,
  ConnectorDto,
  ConnectorListDto,
  ErpStatusDto,
  HealthListDto,
  MatchRequestDto,
  MatchResultDto,
  PushDto,
  PushRequestDto,
  UpdateConnectorDto,
} from './dto/connector.dto.js';
import { ErpSyncService } from './erp-sync.service.js';

// Replaces TenantEndpoint's 403 on the method, so it names both refusals.
const MembersMayNot = () =>
  ApiError(
    403,
    'A user token whose role is member (connectors are changed by owners and admins), or an admin JWT',
    { name: 'member', code: 'FORBIDDEN', message: 'Only owners and admins may change connectors' },
    ERRORS.adminTokenOnTenantPath,
  );

const CONNECTOR_INACTIVE: ErrorCase = {
  name: 'connector_inactive',
  code: 'INVALID_STATE',
  message: 'Connector is not active',
};

/** Match and push: the document must be valid or signed and the connector active. */
const UsesDocument = () =>
  applyDecorators(
    ApiError(
      404,
      "No such document or connector for this tenant (another tenant's is 404 too), or no active connector",
      notFound('Document'),
      notFound('Connector'),
    ),
    ApiError(
      409,
      'The document is not valid or signed, the connector is not active, or the document lacks the reference',
      {
        name: 'document_pending',
        code: 'INVALID_STATE',
        message: 'Document is pending; only valid or signed documents can be used',
      },
      CONNECTOR_INACTIVE,
    ),
  );

const ConnectorId = () => IdParam('id', 'Connector', "No such connector for this tenant (another tenant's is 404 too)");

const PUSH_DESCRIPTION =
  'Creates the push of a valid or signed document to the connector and queues it; the ERP call happens in ' +
  'the background with retries (poll GET /connectors/pushes/{pushId}). One push per connector and ' +
  'document: pushing again answers the existing push. Audited.';

/** A push (POST /connectors/push-to-erp/:id and its alias): 202 with the push, and the refusals of both. */
const PushesDocument = () =>
  // Applied in this order, as the same decorators written above a method would be (bottom first): the
  // descriptions of a status they share are joined in it.
  applyDecorators(
    UsesDocument(),
    JsonBodyErrors('connector_id missing or not a uuid'),
    IdParam('id', 'Document', "No such document or connector for this tenant (another tenant's is 404 too)"),
    ApiAcceptedResponse({ type: PushDto }),
    HttpCode(202),
  );

/** C2: ERP connectors, with the tenant's own credentials. */
@ApiTags('connectors')
@TenantEndpoint()
@Controller('connectors')
export class ConnectorsController {
  constructor(
    private readonly connectors: ConnectorsService,
    private readonly sync: ErpSyncService,
  ) {}

  @Post('configure')
  @ApiOperation({
    summary: 'Configure a connector; credentials are sealed and never returned',
    description:
      'An ERP connection (SAP or Oracle): its base URL, auth type and credentials. The credentials ' +
      'are sealed with the master key; answers only say which fields are set. Audited.',
  })
  @ApiCreatedResponse({ type: ConnectorDto })
  @JsonBodyErrors('An unknown ERP or auth type, an unusable base URL, or credentials missing for the auth type', {
    name: 'invalid_address',
    code: 'VALIDATION_ERROR',
    message: 'Invalid connector address',
    details: [{ path: '/base_url', message: 'must be an absolute http or https URL' }],
  })
  @MembersMayNot()
  configure(@Body() body: ConfigureConnectorDto, @Tenant() auth: TenantAuth, @ClientIp() ip: string | null) {
    return this.connectors.configure({ auth, ip }, body);
  }

  @Get()
  @ApiOperation({
    summary: "The tenant's connectors (which credential fields are set, never their values)",
    description: 'Every connector of the tenant with its health as last checked, oldest first.',
  })
  @ApiOkResponse({ type: ConnectorListDto })
  async list(@Tenant() auth: TenantAuth): Promise<ConnectorListDto> {
    return { connectors: await this.connectors.list(auth.tenantId) };
  }

  @Get('health')
  @ApiOperation({
    summary: 'Every active connector checked with a light authenticated call (cached a minute)',
    description:
      "Asks each active connector's ERP with a light authenticated call and answers its health (healthy or " +
      'unhealthy, with a reason). A result younger than a minute is reused.',
  })
  @ApiOkResponse({ type: HealthListDto })
  async health(@Tenant() auth: TenantAuth): Promise<HealthListDto> {
    return { connectors: await this.connectors.health(auth.tenantId) };
  }

  @Post('match')
  @HttpCode(200)
  @ApiOperation({
    summary: "Find a document's purchase order or delivery in the ERP and compare",
    description:
      "Looks up an invoice's purchase order (by order_ref) or a nomination's delivery (by nomination_ref) in " +
      'the ERP and compares them field by field. The document must be valid or signed. Audited.',
  })
  @ApiOkResponse({ type: MatchResultDto })
  @JsonBodyErrors('document_id missing or not a uuid, or connector_id not a uuid')
  @UsesDocument()
  @ApiBadGatewayResponse({
    type: ErrorResponseDto,
    description: 'ERP_ERROR: the ERP could not be asked (after retries)',
    example: {
      error: { code: 'ERP_ERROR', message: 'The ERP could not be asked: no answer within the time-out', details: [] },
    },
  })
  match(@Body() body: MatchRequestDto, @Tenant() auth: TenantAuth, @ClientIp() ip: string | null) {
    return this.sync.match({ auth, ip }, body.document_id, body.connector_id);
  }

  @Post('push-to-erp/:id')
  @ApiOperation({
    summary: 'Push a document into the ERP (a job); pushing again returns the existing push',
    description: PUSH_DESCRIPTION,
  })
  @PushesDocument()
  async push(
    @Param('id', UuidPipe) id: string,
    @Body() body: PushRequestDto,
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
  ): Promise<PushDto> {
    return (await this.sync.push({ auth, ip }, id, body.connector_id)).push;
  }

  @Get('pushes/:pushId')
  @ApiOperation({
    summary: 'A push: queued, running, succeeded (with the ERP id) or failed (with its message)',
    description: "One push of the tenant's, with its status, attempts and, once done, the ERP's id or message.",
  })
  @ApiOkResponse({ type: PushDto })
  @IdParam('pushId', 'Push', "No such push for this tenant (another tenant's is 404 too)")
  getPush(@Param('pushId', UuidPipe) pushId: string, @Tenant() auth: TenantAuth) {
    return this.sync.getPush(auth.tenantId, pushId);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Change a connector; credential fields not given are kept',
    description:
      'Fields not given stay as they are; credential fields given replace those stored (a new auth_type needs ' +
      'all of its credentials). Audited.',
  })
  @ApiOkResponse({ type: ConnectorDto })
  @ConnectorId()
  @JsonBodyErrors('An unknown auth type, an unusable base URL, or credentials missing for a new auth type')
  @MembersMayNot()
  update(
    @Param('id', UuidPipe) id: string,
    @Body() body: UpdateConnectorDto,
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
  ) {
    return this.connectors.update({ auth, ip }, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a connector',
    description: 'Deletes the connector and its sealed credentials. Audited.',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ConnectorId()
  @MembersMayNot()
  async remove(@Param('id', UuidPipe) id: string, @Tenant() auth: TenantAuth, @ClientIp() ip: string | null) {
    await this.connectors.remove({ auth, ip }, id);
  }
}

/** C2 aliases for clients of the other public SDF server. */
@ApiTags('connectors')
@TenantEndpoint()
@Controller('sdf')
export class ConnectorAliasesController {
  constructor(private readonly sync: ErpSyncService) {}

  @Post(':id/push-to-erp')
  @ApiOperation({
    summary: 'Alias of POST /connectors/push-to-erp/:id',
    description: `The same operation as POST /connectors/push-to-erp/{id}, for clients of the other public SDF server. ${PUSH_DESCRIPTION}`,
    deprecated: true,
  })
  @PushesDocument()
  async push(
    @Param('id', UuidPipe) id: string,
    @Body() body: PushRequestDto,
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
  ): Promise<PushDto> {
    return (await this.sync.push({ auth, ip }, id, body.connector_id)).push;
  }

  @Get(':id/erp-status')
  @ApiOperation({
    summary: "A document's pushes to every connector",
    description: 'Every push of the document, oldest first, each with its connector and status.',
  })
  @ApiOkResponse({ type: ErpStatusDto })
  @IdParam('id', 'Document', "No such document for this tenant (another tenant's is 404 too)")
  async status(@Param('id', UuidPipe) id: string, @Tenant() auth: TenantAuth): Promise<ErpStatusDto> {
    return { document_id: id, pushes: await this.sync.erpStatus(auth.tenantId, id) };
  }
}
