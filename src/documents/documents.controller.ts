import {
  applyDecorators,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConflictResponse,
  ApiConsumes,
  ApiCreatedResponse,
  ApiExtension,
  ApiHeader,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiProduces,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { TenantAuth } from '../auth/auth-context.js';
import { ClientIp, Tenant, TenantEndpoint } from '../auth/decorators.js';
import { ErrorResponseDto } from '../common/error-response.dto.js';
import { UuidPipe } from '../common/uuid.pipe.js';
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

/** S1: an alias route, marked as such in the OpenAPI document. */
const Alias = (of: string) =>
  applyDecorators(ApiExtension('x-alias-of', of), ApiOperation({ summary: `Alias of ${of} (S1)` }));

const Upload = () =>
  applyDecorators(
    ApiConsumes('multipart/form-data'),
    ApiBody(FILE_BODY),
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description: 'A retried upload with the same key returns the first record (S2)',
    }),
    ApiCreatedResponse({ type: DocumentDto, description: 'Stored; status pending until the validation job ends' }),
    ApiPayloadTooLargeResponse({ type: ErrorResponseDto, description: 'PAYLOAD_TOO_LARGE: over 50 MB' }),
    ApiUnprocessableEntityResponse({
      type: ErrorResponseDto,
      description: 'SDF_ERROR_NOT_ZIP or SDF_ERROR_INVALID_META (S2); nothing is stored',
    }),
  );

const List = () => applyDecorators(ApiOkResponse({ type: DocumentListDto }));
const Deleted = () => applyDecorators(ApiNoContentResponse({ description: 'File and record deleted' }), NotFound());
const NotFound = () => ApiNotFoundResponse({ type: ErrorResponseDto, description: 'No such document for this tenant' });

/** SDF-SPEC Documents endpoints; every query is scoped by the authenticated tenant (S5). */
@ApiTags('documents')
@TenantEndpoint()
@Controller()
export class DocumentsController {
  constructor(
    private readonly documents: DocumentsService,
    private readonly uploads: UploadHandler,
  ) {}

  @Post('upload')
  @Upload()
  @ApiOperation({ summary: 'Upload an .sdf file (multipart field `file`); validation runs in the background' })
  upload(
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
    @Headers('idempotency-key') key?: string,
  ): Promise<DocumentDto> {
    return this.uploads.upload({ auth, ip }, req, res, key);
  }

  @Post('sdf')
  @Upload()
  @Alias('POST /upload')
  uploadAlias(
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
    @Headers('idempotency-key') key?: string,
  ): Promise<DocumentDto> {
    return this.uploads.upload({ auth, ip }, req, res, key);
  }

  @Post('validate')
  @ApiOperation({ summary: 'Validate an .sdf file synchronously; nothing is stored' })
  @ApiConsumes('multipart/form-data')
  @ApiBody(FILE_BODY)
  @ApiOkResponse({ type: ValidateOkDto, description: 'Every check passed' })
  @ApiUnprocessableEntityResponse({ type: ValidateFailedDto, description: 'A check failed (F10)' })
  @ApiPayloadTooLargeResponse({ type: ErrorResponseDto })
  validate(
    @Tenant() auth: TenantAuth,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ValidateOkDto | ValidateFailedDto> {
    return this.uploads.validate(auth, req, res);
  }

  @Get('sdf/:id')
  @ApiOperation({ summary: 'One document record with its validation result (S1), for polling' })
  @ApiOkResponse({ type: DocumentDetailDto })
  @NotFound()
  async getOne(@Tenant() auth: TenantAuth, @Param('id', UuidPipe) id: string): Promise<DocumentDetailDto> {
    return DocumentDetailDto.fromDetail(await this.documents.get(auth.tenantId, id));
  }

  @Get('download/:id')
  @ApiOperation({ summary: 'The stored .sdf file' })
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({ schema: { type: 'string', format: 'binary' }, description: 'The file, byte for byte' })
  @NotFound()
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
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  }

  @Get('meta/:id')
  @ApiOperation({ summary: 'meta.json in the service shape (F4), read at upload; any status' })
  @ApiOkResponse({ schema: { type: 'object', additionalProperties: true } })
  @NotFound()
  meta(@Tenant() auth: TenantAuth, @Param('id', UuidPipe) id: string): Promise<Record<string, unknown>> {
    return this.documents.meta(auth.tenantId, id);
  }

  @Get('data/:id')
  @ApiOperation({ summary: 'data.json of a valid or signed document (its shape depends on the type and schema)' })
  @ApiOkResponse({ schema: { type: 'object', additionalProperties: true } })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'INVALID_STATE: the document is pending or invalid' })
  @NotFound()
  async data(@Tenant() auth: TenantAuth, @Param('id', UuidPipe) id: string, @Res() res: Response): Promise<void> {
    const stream = await this.documents.data(auth.tenantId, id);
    res.status(200);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  }

  @Get('list')
  @ApiOperation({ summary: 'Documents, newest first, keyset-paginated (S4)' })
  @List()
  list(@Tenant() auth: TenantAuth, @Query() query: ListDocumentsQueryDto): Promise<DocumentListDto> {
    return this.page(auth, query);
  }

  @Get('sdf')
  @Alias('GET /list')
  @List()
  listAlias(@Tenant() auth: TenantAuth, @Query() query: ListDocumentsQueryDto): Promise<DocumentListDto> {
    return this.page(auth, query);
  }

  @Delete('delete/:id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete the file and the record permanently' })
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
  @Alias('DELETE /delete/:id')
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
