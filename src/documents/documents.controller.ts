import { pipeline, type Readable } from 'node:stream';
import { applyDecorators, Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiExtension,
  ApiHeader,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { TenantAuth } from '../auth/auth-context.js';
import { ClientIp, Tenant, TenantEndpoint, AllowUnverified } from '../auth/decorators.js';
import { UuidPipe } from '../common/uuid.pipe.js';
import { ApiError, ERRORS, IdParam, type ErrorCase } from '../openapi/decorators.js';
import { EX } from '../openapi/examples.js';
import { DocumentsService } from './documents.service.js';
import { UploadHandler } from './upload.handler.js';
import { DocumentDetailDto, DocumentDto, DocumentListDto, DocumentListItemDto } from './dto/document.dto.js';
import { ListDocumentsQueryDto } from './dto/list-query.dto.js';
import { ValidateFailedDto, ValidateOkDto } from './dto/validate-result.dto.js';

const FILE_BODY = {
  schema: {
    type: 'object',
    required: ['file'],
    properties: { file: { type: 'string', format: 'binary', description: 'The .sdf file (at most 50 MB)' } },
  },
};

const UPLOAD_DESCRIPTION =
  'Stores the file and answers at once with its record in status `pending`; a background job validates it ' +
  '(poll GET /sdf/{id}, or subscribe to document.validated). Only meta.json is read now: a file that is ' +
  'not a ZIP or whose meta.json is missing or unreadable is refused with 422, and nothing is stored on any ' +
  'error. A retry with the same Idempotency-Key answers the first record, with Idempotent-Replayed: true.';

/** S1: an alias route, marked as such in the OpenAPI document. */
const Alias = (of: string, what: string) =>
  applyDecorators(
    ApiExtension('x-alias-of', of),
    ApiOperation({
      summary: `Alias of ${of}`,
      description: `The same operation as ${of} under another path: ${what}`,
    }),
  );

const NOT_ZIP: ErrorCase = {
  name: 'not_zip',
  code: 'SDF_ERROR_NOT_ZIP',
  message: 'the file is not a ZIP archive (no end of central directory record)',
};
const INVALID_META: ErrorCase = {
  name: 'invalid_meta',
  code: 'SDF_ERROR_INVALID_META',
  message: 'meta.json is missing',
  file: 'meta.json',
  details: [{ path: '', message: 'the archive has no meta.json' }],
};
const MALFORMED_IDEMPOTENCY_KEY: ErrorCase = {
  name: 'malformed_idempotency_key',
  code: 'VALIDATION_ERROR',
  message: 'Malformed Idempotency-Key',
  details: [{ path: '/headers/idempotency-key', message: 'must be 1 to 255 visible ASCII characters' }],
};

/**
 * The multipart body of /upload and /validate: no file field is 400, a file over MAX_UPLOAD_BYTES is 413,
 * a stalled body 408, and past the tenant's uploads in flight 429 (beside the tenant routes' own 429s).
 */
const FileBody = () =>
  applyDecorators(
    ApiConsumes('multipart/form-data'),
    ApiBody(FILE_BODY),
    ApiError(400, 'Not multipart/form-data, no `file` field, or a malformed body', ERRORS.notMultipart),
    ApiError(
      408,
      'The body stalled: less than UPLOAD_BODY_MIN_BYTES arrived within UPLOAD_BODY_STALL_MS; the connection is ' +
        'closed and nothing is kept',
      ERRORS.bodyStalled,
    ),
    ApiError(413, 'The file is over MAX_UPLOAD_BYTES (50 MB by default); nothing is stored', ERRORS.fileTooLarge),
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

const Upload = () =>
  applyDecorators(
    FileBody(),
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      // No `example`: Swagger UI would fill it in, and a second "Try it out" would quietly answer the first
      // upload's record.
      description:
        'A retried upload with the same key answers the first record; 1 to 255 visible ASCII, such as ' +
        '`erp-7f3c9a21-upload-1`. Use a new key for every new upload.',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
    }),
    ApiCreatedResponse({ type: DocumentDto, description: 'Stored; status pending until the validation job ends' }),
    ApiError(400, 'A malformed Idempotency-Key', MALFORMED_IDEMPOTENCY_KEY),
    ApiError(
      422,
      'SDF_ERROR_NOT_ZIP, SDF_ERROR_INVALID_META or another archive fault the partial read finds; nothing is stored',
      NOT_ZIP,
      INVALID_META,
    ),
  );

const List = () =>
  applyDecorators(
    ApiOkResponse({ type: DocumentListDto }),
    ApiError(
      400,
      'A query parameter out of range or malformed (`q` over 200 characters, a date that is not YYYY-MM-DD, an ' +
        'amount range without `currency`), or a malformed or tampered cursor',
      ERRORS.invalidQuery,
    ),
  );
const DocumentId = () => IdParam('id', 'Document', "No such document for this tenant (another tenant's is 404 too)");
const Deleted = () => applyDecorators(ApiNoContentResponse({ description: 'File and record deleted' }), DocumentId());

/** SDF-SPEC Documents endpoints; every query is scoped by the authenticated tenant (S5). */
@ApiTags('documents')
@TenantEndpoint()
@Controller()
export class DocumentsController {
  constructor(
    private readonly documents: DocumentsService,
    private readonly uploads: UploadHandler,
  ) {}

  // The Idempotency-Key header is read from the request, not through @Headers(), which would list it a
  // second time (and as required) in the OpenAPI document beside @ApiHeader.
  @Post('upload')
  @Upload()
  @ApiOperation({
    summary: 'Upload an .sdf file (multipart field `file`); validation runs in the background',
    description: UPLOAD_DESCRIPTION,
  })
  upload(
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DocumentDto> {
    return this.uploads.upload({ auth, ip }, req, res, req.get('idempotency-key'));
  }

  @Post('sdf')
  @Upload()
  @Alias('POST /upload', UPLOAD_DESCRIPTION)
  uploadAlias(
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DocumentDto> {
    return this.uploads.upload({ auth, ip }, req, res, req.get('idempotency-key'));
  }

  @Post('validate')
  // Judges a file and stores nothing: a read, open to a user whose address is not verified yet.
  @AllowUnverified()
  @ApiOperation({
    summary: 'Validate an .sdf file synchronously; nothing is stored',
    description:
      'Runs the six checks of the format core (the same as `sdf validate`) on the uploaded file and answers ' +
      'the result: 200 when every check passed, 422 with the first failure and the state of each check ' +
      'otherwise. Both carry the `summary` the service would store for the file (as list items carry it), ' +
      'null when data.json cannot be read. The file is discarded either way.',
  })
  @FileBody()
  @ApiOkResponse({ type: ValidateOkDto, description: 'Every check passed' })
  @ApiUnprocessableEntityResponse({
    type: ValidateFailedDto,
    description: 'A check failed: the error body with `valid: false` and the checks beside it',
    examples: {
      schema_mismatch: {
        summary: 'data.json does not pass schema.json',
        value: {
          valid: false,
          error: {
            code: 'SDF_ERROR_SCHEMA_MISMATCH',
            message: 'data.json does not match schema.json: /invoice_number must be string',
            file: 'data.json',
            details: [{ path: '/invoice_number', message: 'must be string' }],
          },
          checks: {
            container: 'pass',
            meta: 'pass',
            schema: 'pass',
            data: 'fail',
            pdf: 'skipped',
            signature: 'skipped',
          },
          summary: {
            title: 'Invoice 42',
            number: '42',
            issuer: 'Acme GmbH',
            counterparty: 'Globex Ltd',
            amount: '1713.60',
            currency: 'EUR',
            issue_date: '2026-03-15',
            due_date: '2026-04-14',
            references: ['PO-2026-0815'],
          },
        },
      },
    },
  })
  validate(
    @Tenant() auth: TenantAuth,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ValidateOkDto | ValidateFailedDto> {
    return this.uploads.validate(auth, req, res);
  }

  @Get('sdf/:id')
  @ApiOperation({
    summary: 'One document record with its validation result, for polling',
    description:
      'The record with `validation` (null while pending), `validated_at` and, when the last signing gave up, ' +
      '`signing_error`. Poll it after an upload until `status` is no longer `pending`.',
  })
  @ApiOkResponse({ type: DocumentDetailDto })
  @DocumentId()
  async getOne(@Tenant() auth: TenantAuth, @Param('id', UuidPipe) id: string): Promise<DocumentDetailDto> {
    return DocumentDetailDto.fromDetail(await this.documents.get(auth.tenantId, id));
  }

  @Get('download/:id')
  @ApiOperation({
    summary: 'The stored .sdf file',
    description:
      'The file byte for byte as stored (after signing, the signed file), whatever its status, as an ' +
      'attachment named after its document_id. Each download is audited.',
  })
  @ApiOkResponse({
    description: 'The file, byte for byte',
    content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
  })
  @DocumentId()
  async download(
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
    @Param('id', UuidPipe) id: string,
    @Res() res: Response,
  ): Promise<void> {
    const { doc, stream } = await this.documents.download({ auth, ip }, id);
    res.status(200);
    res.setHeader('Content-Type', 'application/octet-stream');
    res.setHeader('Content-Length', String(doc.file_size_bytes));
    res.setHeader('Content-Disposition', `attachment; filename="${doc.document_id}.sdf"`);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    sendStream(stream, res);
  }

  @Get('meta/:id')
  @ApiOperation({
    summary: 'meta.json in the service shape, read at upload; any status',
    description:
      'meta.json as read at upload, unknown fields included, in the service shape; answered for a document ' +
      'in any status, pending and invalid ones included.',
  })
  @ApiOkResponse({
    schema: {
      type: 'object',
      additionalProperties: true,
      example: {
        sdf_version: '0.1',
        document_id: EX.metaDocumentId,
        document_type: 'invoice',
        schema_id: 'invoice/v1',
        issuer: 'Acme GmbH',
        created_at: EX.createdAt,
      },
    },
  })
  @DocumentId()
  meta(@Tenant() auth: TenantAuth, @Param('id', UuidPipe) id: string): Promise<Record<string, unknown>> {
    return this.documents.meta(auth.tenantId, id);
  }

  @Get('data/:id')
  @ApiOperation({
    summary: 'data.json of a valid or signed document (its shape depends on the type and schema)',
    description:
      'data.json byte for byte as it is in the stored file. Only a valid or signed document has one: ' +
      'a pending document has not been judged yet, an invalid one was refused (409 INVALID_STATE).',
  })
  @ApiOkResponse({
    schema: {
      type: 'object',
      additionalProperties: true,
      example: { invoice_number: 'INV-2026-0042', currency: 'EUR', total: 1190.0 },
    },
  })
  @ApiError(409, 'INVALID_STATE: the document is pending or invalid', {
    name: 'pending',
    code: 'INVALID_STATE',
    message: 'The document is still pending validation; its data is available once it is valid',
  })
  @DocumentId()
  async data(@Tenant() auth: TenantAuth, @Param('id', UuidPipe) id: string, @Res() res: Response): Promise<void> {
    const stream = await this.documents.data(auth.tenantId, id);
    res.status(200);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    sendStream(stream, res);
  }

  @Get('list')
  @ApiOperation({
    summary: 'Documents, newest first, keyset-paginated; search by number, names, amount, dates and references',
    description:
      "The tenant's documents, newest first, each with its `summary`. `limit` 1 to 100 (default 20); pass " +
      '`next_cursor` as `cursor` for the next page while `has_more` is true. Every filter combines: `status`, ' +
      '`document_type`, `q` (words and number fragments over the business number, names and references, ' +
      'ranked with an exact number first), `counterparty`, `amount_min`/`amount_max` with `currency`, ' +
      '`issued_from`/`issued_to`, `due_from`/`due_to`, `references`; `sort` by relevance, uploaded, ' +
      'issue_date, due_date or amount, `order` asc or desc. A malformed filter is 400 naming it.',
  })
  @List()
  list(@Tenant() auth: TenantAuth, @Query() query: ListDocumentsQueryDto): Promise<DocumentListDto> {
    return this.page(auth, query);
  }

  @Get('sdf')
  @Alias('GET /list', "The tenant's documents, newest first, keyset-paginated.")
  @List()
  listAlias(@Tenant() auth: TenantAuth, @Query() query: ListDocumentsQueryDto): Promise<DocumentListDto> {
    return this.page(auth, query);
  }

  @Delete('delete/:id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete the file and the record permanently',
    description:
      'Removes the record, writes its audit entry and the document.deleted event in one transaction, then ' +
      'removes the stored file. There is no undo.',
  })
  @Deleted()
  async delete(
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
    @Param('id', UuidPipe) id: string,
  ): Promise<void> {
    await this.documents.delete({ auth, ip }, id);
  }

  @Delete('sdf/:id')
  @HttpCode(204)
  @Alias('DELETE /delete/:id', 'Deletes the file and the record permanently.')
  @Deleted()
  async deleteAlias(
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
    @Param('id', UuidPipe) id: string,
  ): Promise<void> {
    await this.documents.delete({ auth, ip }, id);
  }

  private async page(auth: TenantAuth, query: ListDocumentsQueryDto): Promise<DocumentListDto> {
    const { rows, hasMore, nextCursor } = await this.documents.list(auth.tenantId, query);
    return { documents: rows.map((d) => DocumentListItemDto.from(d)), next_cursor: nextCursor, has_more: hasMore };
  }
}

/**
 * Streams a stored file as the answer. A read error cuts the answer (its length was promised), and a
 * client that goes away closes the file at once, rather than when the collector finds its handle.
 */
function sendStream(stream: Readable, res: Response): void {
  pipeline(stream, res, () => undefined);
}
