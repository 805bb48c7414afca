import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import type { TenantAuth } from '../auth/auth-context.js';
import { ClientIp, Tenant, TenantEndpoint } from '../auth/decorators.js';
import { ErrorResponseDto } from '../common/error-response.dto.js';
import { CreateSchemaDto, SchemaListDto, SchemaSummaryDto, SchemaVersionQueryDto } from './dto/schema.dto.js';
import { SchemaRegistryService } from './schema-registry.service.js';

const SCHEMA_BODY = { description: 'The registered JSON Schema, as published', schema: { type: 'object' as const } };

/** S14: the tenant's schema registry. */
@ApiTags('schemas')
@TenantEndpoint()
@Controller('schemas')
export class SchemasController {
  constructor(private readonly registry: SchemaRegistryService) {}

  @Post()
  @ApiOperation({ summary: 'Register a schema version' })
  @ApiCreatedResponse({ type: SchemaSummaryDto })
  @ApiBadRequestResponse({
    description: 'Malformed schema_id or version, or a schema that does not compile',
    type: ErrorResponseDto,
  })
  @ApiConflictResponse({ description: 'This schema_id and version are already registered', type: ErrorResponseDto })
  async create(
    @Tenant() auth: TenantAuth,
    @Body() body: CreateSchemaDto,
    @ClientIp() ip: string | null,
  ): Promise<SchemaSummaryDto> {
    return SchemaSummaryDto.from(await this.registry.register(auth.tenantId, body, { actor: auth.actor, ip }));
  }

  @Get()
  @ApiOperation({ summary: "List the tenant's registered schemas, newest first" })
  @ApiOkResponse({ type: SchemaListDto })
  async list(@Tenant() auth: TenantAuth): Promise<SchemaListDto> {
    return { schemas: (await this.registry.list(auth.tenantId)).map((r) => SchemaSummaryDto.from(r)) };
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Fetch a registered schema (schema id URL-encoded, e.g. invoice%2Fv1)',
    description: 'The most recently registered version unless `version` is given. Also served as /schemas/invoice/v1.',
  })
  @ApiParam({ name: 'id', example: 'invoice%2Fv1' })
  @ApiOkResponse(SCHEMA_BODY)
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  getEncoded(
    @Tenant() auth: TenantAuth,
    @Param('id') id: string,
    @Query() query: SchemaVersionQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Record<string, unknown>> {
    return this.fetch(auth, id, query, res);
  }

  @Get(':type/:major')
  @ApiOperation({ summary: 'Fetch a registered schema by its id as two path segments (e.g. /schemas/invoice/v1)' })
  @ApiParam({ name: 'type', example: 'invoice' })
  @ApiParam({ name: 'major', example: 'v1' })
  @ApiOkResponse(SCHEMA_BODY)
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  getBySegments(
    @Tenant() auth: TenantAuth,
    @Param('type') type: string,
    @Param('major') major: string,
    @Query() query: SchemaVersionQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Record<string, unknown>> {
    return this.fetch(auth, `${type}/${major}`, query, res);
  }

  private async fetch(
    auth: TenantAuth,
    schemaId: string,
    query: SchemaVersionQueryDto,
    res: Response,
  ): Promise<Record<string, unknown>> {
    const row = await this.registry.get(auth.tenantId, schemaId, query.version);
    // The body is the schema itself; which version was served travels in headers.
    res.setHeader('X-Schema-Version', row.version);
    res.setHeader('ETag', `"${row.content_hash}"`);
    return row.schema;
  }
}
