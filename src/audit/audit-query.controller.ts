import { Controller, Get, Query, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import type { AuthenticatedRequest } from '../auth/auth-context.js';
import { UserEndpoint } from '../auth/decorators.js';
import { ApiError, ERRORS } from '../openapi/decorators.js';
import { AuditReaders } from './audit-readers.js';
import { AuditQueryService } from './audit-query.service.js';
import { AuditPageDto, AuditQueryDto } from './dto/audit-query.dto.js';

/**
 * M4: the organization's audit trail for its owner and admins (managed deployment only: mounted by the
 * module that provides `AuditReaders`).
 */
@ApiTags('v1 audit')
@UserEndpoint()
@Controller('v1/audit')
export class AuditQueryController {
  constructor(
    private readonly audit: AuditQueryService,
    private readonly readers: AuditReaders,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'Audit entries, newest first, filtered by action, actor and time range',
    description:
      "The organization's audit entries, newest first, keyset-paginated: pass `next_cursor` as `cursor` while " +
      '`has_more` is true. Filters (action, actor, from, to) combine. Owner or admin only.',
  })
  @ApiOkResponse({ type: AuditPageDto })
  @ApiError(400, 'limit over 200, malformed or tampered cursor, bad dates', {
    name: 'invalid_query',
    code: 'VALIDATION_ERROR',
    message: 'Request validation failed',
    details: [{ path: '/limit', message: 'limit must not be greater than 200' }],
  })
  @ApiError(
    403,
    "A member's token (owner or admin only), or not a signed-in user's token",
    ERRORS.managersOnly,
    ERRORS.notUserSession,
  )
  async list(@Req() req: Request & AuthenticatedRequest, @Query() query: AuditQueryDto): Promise<AuditPageDto> {
    return this.audit.page(await this.readers.tenantOf(req), query);
  }
}
