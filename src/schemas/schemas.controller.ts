import { applyDecorators, Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { TenantAuth } from '../auth/auth-context.js';
import { ClientIp, Tenant, TenantEndpoint } from '../auth/decorators.js';
import { ApiError, JsonBodyErrors, notFound } from '../openapi/decorators.js';
import { CreateSchemaDto, SchemaListDto, SchemaSummaryDto, SchemaVersionQueryDto } from './dto/schema.dto.js';
import { SchemaRegistryService } from './schema-registry.service.js';

const SCHEMA_BODY = {
  description: 'The registered JSON Schema, as published; X-Schema-Version and ETag name the version served',
  schema: {
    type: 'object' as const,
    example: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      required: ['invoice_number'],
      properties: { invoice_number: { type: 'string' } },
    },
  },
  headers: {
    'X-Schema-Version': { description: 'The version served', schema: { type: 'string' as const }, example: '1.0.0' },
    ETag: { description: "The schema's content hash", schema: { type: 'string' as const } },
  },
};

/** Both ways of naming a schema: the answer, and what a bad version or an unknown schema answers. */
const SchemaFetch = () =>
  applyDecorators(
    ApiOkResponse(SCHEMA_BODY),
    ApiError(400, 'A malformed version', {
      name: 'invalid_query',
      code: 'VALIDATION_ERROR',
      message: 'Request validation failed',
      details: [{ path: '/version', message: 'version must be shorter than or equal to 64 characters' }],
    }),
    ApiError(404, 'No such schema id, or no such version of it, for this tenant', notFound('Schema')),
  );

/** S14: the tenant's schema registry. */
@ApiTags('schemas')
@TenantEndpoint()
@Controller('schemas')
export class SchemasController {
  constructor(private readonly registry: SchemaRegistryService) {}

  @Post()
  @ApiOperation({
    summary: 'Register a schema version',
    description:
      'Registers a JSON Schema (Draft 2020-12) under a schema id (`<type>/v<major>`) and a version. It must ' +
      'compile and resolve every $ref inside itself. A registered version never changes. The validation ' +
      'result of a document whose meta.json names the schema id says whether its embedded schema.json equals ' +
      'a registered version (`registry_match`); the embedded schema stays the one validation uses. Audited.',
  })
  @ApiCreatedResponse({ type: SchemaSummaryDto })
  @JsonBodyErrors('Malformed schema_id or version, or a schema that does not compile', {
    name: 'schema_too_deep',
    code: 'VALIDATION_ERROR',
    message: 'Schema is nested too deeply',
    details: [{ path: '/schema', message: 'nesting deeper than 64 levels' }],
  })
  @ApiError(409, 'This schema_id and version are already registered', {
    name: 'registered',
    code: 'CONFLICT',
    message: "Schema 'invoice/v1' version '1.0.0' is already registered",
  })
  async create(
    @Tenant() auth: TenantAuth,
    @Body() body: CreateSchemaDto,
    @ClientIp() ip: string | null,
  ): Promise<SchemaSummaryDto> {
    return SchemaSummaryDto.from(await this.registry.register(auth.tenantId, body, { actor: auth.actor, ip }));
  }

  @Get()
  @ApiOperation({
    summary: "List the tenant's registered schemas, newest first",
    description: 'Every registered schema id and version, without the schemas themselves.',
  })
  @ApiOkResponse({ type: SchemaListDto })
  async list(@Tenant() auth: TenantAuth): Promise<SchemaListDto> {
    return { schemas: (await this.registry.list(auth.tenantId)).map((r) => SchemaSummaryDto.from(r)) };
  }

  @Get(':schemaId')
  @ApiOperation({
    summary: 'Fetch a registered schema (schema id URL-encoded, e.g. invoice%2Fv1)',
    description: 'The most recently registered version unless `version` is given. Also served as /schemas/invoice/v1.',
  })
  @ApiParam({ name: 'schemaId', example: 'invoice%2Fv1', description: 'A schema id (not a uuid), URL-encoded' })
  @SchemaFetch()
  getEncoded(
    @Tenant() auth: TenantAuth,
    @Param('schemaId') id: string,
    @Query() query: SchemaVersionQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Record<string, unknown>> {
    return this.fetch(auth, id, query, res);
  }

  @Get(':type/:major')
  @ApiOperation({
    summary: 'Fetch a registered schema by its id as two path segments (e.g. /schemas/invoice/v1)',
    description:
      'The same as GET /schemas/{schemaId} with the schema id written as a path: the most recently registered ' +
      'version unless `version` is given.',
  })
  @ApiParam({ name: 'type', example: 'invoice', description: 'The part of the schema id before the slash' })
  @ApiParam({ name: 'major', example: 'v1', description: 'The part of the schema id after the slash' })
  @SchemaFetch()
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
