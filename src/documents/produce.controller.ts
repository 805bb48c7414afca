import { applyDecorators, Body, Controller, Post, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiExtension, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { TenantAuth } from '../auth/auth-context.js';
import { ClientIp, Tenant, TenantEndpoint } from '../auth/decorators.js';
import { ApiError, ERRORS, JsonBodyErrors, notFound } from '../openapi/decorators.js';
import { DocumentDto } from './dto/document.dto.js';
import { ProduceDto } from './dto/produce.dto.js';
import { ProduceHandler } from './produce.handler.js';

const DESCRIPTION =
  'Makes an SDF file the way `sdf pack` does (rule 10): checks `data` against the schema (`schema`, or ' +
  "`schema_id` and `version` of the tenant's registry), renders visual.pdf laid out by document type " +
  '(invoice, purchase order, nomination, or a generic document), writes meta.json with a new document_id ' +
  'and packs the archive, in a worker within the limits and time budget files are validated under. The ' +
  'file is then stored as an upload is: 201 with the record in status `pending`, the `upload` audit entry ' +
  'and document.uploaded, then the validation job makes it `valid` (document.validated). With `sign: true` ' +
  "the file is signed with the tenant's active key before it is stored (audited as `sign`) and ends `valid` " +
  'with `is_signed: true`; otherwise sign it later with POST /sign/{id}. Data that fails the schema answers ' +
  '422 with its errors and stores nothing. A retry ' +
  'with the same Idempotency-Key answers the first record, with Idempotent-Replayed: true.';

const Produce = () =>
  applyDecorators(
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        'A retried request with the same key answers the first record; 1 to 255 visible ASCII, such as ' +
        '`erp-7f3c9a21-produce-1`. Use a new key for every new document.',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
    }),
    ApiCreatedResponse({
      type: DocumentDto,
      description: 'Made and stored; status pending until the validation job ends',
    }),
    JsonBodyErrors(
      'A malformed body or Idempotency-Key, neither or both of schema and schema_id, or no document type',
      {
        name: 'schema_or_schema_id',
        code: 'VALIDATION_ERROR',
        message: 'Give either schema or schema_id',
        details: [{ path: '/schema', message: 'exactly one of schema and schema_id is required' }],
      },
    ),
    ApiError(
      404,
      "No such registered schema id or version for this tenant (another tenant's is 404 too)",
      notFound('Schema'),
    ),
    ApiError(409, '`sign: true`, and the tenant has no active signing key; nothing is stored', {
      name: 'no_signing_key',
      code: 'INVALID_STATE',
      message: 'The tenant has no active signing key; create one with POST /admin/tenants/:tenantId/signing-keys',
    }),
    ApiError(
      422,
      'The data fails the schema (SDF_ERROR_SCHEMA_MISMATCH with every error), breaks a format rule ' +
        '(SDF_ERROR_INVALID_DATA), the schema does not compile (SDF_ERROR_INVALID_SCHEMA), or the document is ' +
        'over the limits (SDF_ERROR_ARCHIVE_TOO_LARGE); nothing is stored',
      {
        name: 'schema_mismatch',
        code: 'SDF_ERROR_SCHEMA_MISMATCH',
        message:
          "refusing to write an invalid SDF file: data.json does not match schema.json: / must have required property 'invoice_number'",
        file: 'data.json',
        details: [{ path: '', message: "must have required property 'invoice_number'" }],
      },
    ),
    ApiError(
      429,
      "Past the tenant's uploads in flight (UPLOADS_IN_FLIGHT_PER_TENANT) or its rate limit (RATE_LIMITED), past " +
        'a quota of the plan on the managed deployment (QUOTA_EXCEEDED), or too many failed authentications ' +
        'from this address; Retry-After says when to try again',
      ERRORS.tooManyUploads,
      ERRORS.rateLimited,
      ERRORS.quotaExceeded,
      ERRORS.authFailures,
    ),
  );

/** Production through the API: the service makes the SDF file from data (rule 10). */
@ApiTags('documents')
@TenantEndpoint()
@Controller()
export class ProduceController {
  constructor(private readonly handler: ProduceHandler) {}

  // The Idempotency-Key header is read from the request, as on upload, not through @Headers().
  @Post('sdf/produce')
  @Produce()
  @ApiOperation({
    summary: 'Make an SDF file from data, a schema and meta fields, and store it',
    description: DESCRIPTION,
  })
  produce(
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
    @Body() body: ProduceDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DocumentDto> {
    return this.handler.produce({ auth, ip }, body, req, res);
  }
}

/** S16: the managed deployment's versioned path of the same operation. */
@ApiTags('documents')
@TenantEndpoint()
@Controller()
export class ProduceV1Controller {
  constructor(private readonly handler: ProduceHandler) {}

  @Post('v1/sdf/produce')
  @Produce()
  @ApiExtension('x-alias-of', 'POST /sdf/produce')
  @ApiOperation({
    summary: 'Alias of POST /sdf/produce (managed deployment)',
    description: `The same operation as POST /sdf/produce under the versioned path of the managed deployment: ${DESCRIPTION}`,
  })
  produce(
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
    @Body() body: ProduceDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DocumentDto> {
    return this.handler.produce({ auth, ip }, body, req, res);
  }
}
