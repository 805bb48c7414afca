import { Controller, Get, Query, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import type { AuthenticatedRequest } from '../auth/auth-context.js';
import { UserEndpoint } from '../auth/decorators.js';
import { ApiError, ERRORS } from '../openapi/decorators.js';
import { TENANT_AUDIT_ACTIONS } from './audit-actions.js';
import { AuditReaders } from './audit-readers.js';
import { AuditQueryService } from './audit-query.service.js';
import { AuditActionListDto, AuditPageDto, AuditQueryDto } from './dto/audit-query.dto.js';

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
      '`has_more` is true. Filters (action, actor, from, to) combine. Each entry carries, beside its ids, the ' +
      "action in words, who acted (a person's name and address, an API key's name and prefix, or a plain word " +
      'for the service and its operator) and the title of the document it concerns, all read from this ' +
      'organization alone. Owner or admin only.',
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

  @Get('actions')
  @ApiOperation({
    summary: 'The actions an audit entry can record, with their words',
    description: 'Every value the `action` filter can usefully take, in words a person reads. Owner or admin only.',
  })
  @ApiOkResponse({ type: AuditActionListDto })
  @ApiError(
    403,
    "A member's token (owner or admin only), or not a signed-in user's token",
    ERRORS.managersOnly,
    ERRORS.notUserSession,
  )
  async actions(@Req() req: Request & AuthenticatedRequest): Promise<AuditActionListDto> {
    await this.readers.tenantOf(req);
    return { actions: TENANT_AUDIT_ACTIONS.map(({ action, label }) => ({ action, label })) };
  }
}
