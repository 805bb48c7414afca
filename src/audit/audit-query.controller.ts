import { Controller, Get, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiForbiddenResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccountService, type Caller } from '../accounts/account.service.js';
import { CurrentUser } from '../accounts/caller.decorator.js';
import { UserEndpoint } from '../auth/decorators.js';
import { ErrorResponseDto } from '../common/error-response.dto.js';
import { AuditQueryService } from './audit-query.service.js';
import { AuditPageDto, AuditQueryDto } from './dto/audit-query.dto.js';

/** M4: the organization's audit trail for its owner and admins (managed deployment only). */
@ApiTags('v1 audit')
@UserEndpoint()
@Controller('v1/audit')
export class AuditQueryController {
  constructor(
    private readonly audit: AuditQueryService,
    private readonly account: AccountService,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Audit entries, newest first, filtered by action, actor and time range' })
  @ApiOkResponse({ type: AuditPageDto })
  @ApiBadRequestResponse({
    description: 'limit over 200, malformed or tampered cursor, bad dates',
    type: ErrorResponseDto,
  })
  @ApiForbiddenResponse({ description: 'Members may not', type: ErrorResponseDto })
  async list(@CurrentUser() c: Caller, @Query() query: AuditQueryDto): Promise<AuditPageDto> {
    await this.account.manager(c);
    return this.audit.page(c.tenantId, query);
  }
}
