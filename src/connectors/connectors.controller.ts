import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { TenantAuth } from '../auth/auth-context.js';
import { ClientIp, Tenant, TenantEndpoint } from '../auth/decorators.js';
import { ErrorResponseDto } from '../common/error-response.dto.js';
import { UuidPipe } from '../common/uuid.pipe.js';
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

const MEMBER_403 = { description: 'A user whose role is member', type: ErrorResponseDto };
const NOT_VALID_409 = { description: 'The document is not valid or signed', type: ErrorResponseDto };

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
  @ApiOperation({ summary: 'Configure a connector; credentials are sealed and never returned' })
  @ApiCreatedResponse({ type: ConnectorDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto })
  @ApiForbiddenResponse(MEMBER_403)
  configure(@Body() body: ConfigureConnectorDto, @Tenant() auth: TenantAuth, @ClientIp() ip: string | null) {
    return this.connectors.configure({ auth, ip }, body);
  }

  @Get()
  @ApiOperation({ summary: "The tenant's connectors (which credential fields are set, never their values)" })
  @ApiOkResponse({ type: ConnectorListDto })
  async list(@Tenant() auth: TenantAuth): Promise<ConnectorListDto> {
    return { connectors: await this.connectors.list(auth.tenantId) };
  }

  @Get('health')
  @ApiOperation({ summary: 'Every active connector checked with a light authenticated call (cached a minute)' })
  @ApiOkResponse({ type: HealthListDto })
  async health(@Tenant() auth: TenantAuth): Promise<HealthListDto> {
    return { connectors: await this.connectors.health(auth.tenantId) };
  }

  @Post('match')
  @HttpCode(200)
  @ApiOperation({ summary: "Find a document's purchase order or delivery in the ERP and compare" })
  @ApiOkResponse({ type: MatchResultDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  @ApiConflictResponse(NOT_VALID_409)
  match(@Body() body: MatchRequestDto, @Tenant() auth: TenantAuth, @ClientIp() ip: string | null) {
    return this.sync.match({ auth, ip }, body.document_id, body.connector_id);
  }

  @Post('push-to-erp/:id')
  @HttpCode(202)
  @ApiOperation({ summary: 'Push a document into the ERP (a job); pushing again returns the existing push' })
  @ApiAcceptedResponse({ type: PushDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  @ApiConflictResponse(NOT_VALID_409)
  async push(
    @Param('id', UuidPipe) id: string,
    @Body() body: PushRequestDto,
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
  ): Promise<PushDto> {
    return (await this.sync.push({ auth, ip }, id, body.connector_id)).push;
  }

  @Get('pushes/:pushId')
  @ApiOperation({ summary: 'A push: queued, running, succeeded (with the ERP id) or failed (with its message)' })
  @ApiOkResponse({ type: PushDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  getPush(@Param('pushId', UuidPipe) pushId: string, @Tenant() auth: TenantAuth) {
    return this.sync.getPush(auth.tenantId, pushId);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change a connector; credential fields not given are kept' })
  @ApiOkResponse({ type: ConnectorDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  @ApiForbiddenResponse(MEMBER_403)
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
  @ApiOperation({ summary: 'Delete a connector' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  @ApiForbiddenResponse(MEMBER_403)
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
  @HttpCode(202)
  @ApiOperation({ summary: 'Alias of POST /connectors/push-to-erp/:id', deprecated: true })
  @ApiAcceptedResponse({ type: PushDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  @ApiConflictResponse(NOT_VALID_409)
  async push(
    @Param('id', UuidPipe) id: string,
    @Body() body: PushRequestDto,
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
  ): Promise<PushDto> {
    return (await this.sync.push({ auth, ip }, id, body.connector_id)).push;
  }

  @Get(':id/erp-status')
  @ApiOperation({ summary: "A document's pushes to every connector" })
  @ApiOkResponse({ type: ErpStatusDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  async status(@Param('id', UuidPipe) id: string, @Tenant() auth: TenantAuth): Promise<ErpStatusDto> {
    return { document_id: id, pushes: await this.sync.erpStatus(auth.tenantId, id) };
  }
}
