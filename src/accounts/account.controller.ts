import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import {
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
import { ApiKeyListDto, CreateApiKeyDto, CreatedApiKeyDto } from '../admin/dto/api-key.dto.js';
import { AdminService } from '../admin/admin.service.js';
import { UserEndpoint } from '../auth/decorators.js';
import { ErrorResponseDto } from '../common/error-response.dto.js';
import { UuidPipe } from '../common/uuid.pipe.js';
import { AccountService, type Caller } from './account.service.js';
import { CurrentUser } from './caller.decorator.js';
import {
  CreateInvitationDto,
  InvitationDto,
  MemberDto,
  OrganizationDto,
  TeamDto,
  TransferOwnershipDto,
  UpdateMemberDto,
  UpdateOrganizationDto,
  UpdateProfileDto,
} from './dto/account.dto.js';

@ApiTags('v1 account')
@UserEndpoint()
@Controller('v1/account')
export class AccountController {
  constructor(private readonly account: AccountService) {}

  @Get('organization')
  @ApiOperation({ summary: 'The organization (tenant) of the signed-in user' })
  @ApiOkResponse({ type: OrganizationDto })
  organization(@CurrentUser() c: Caller): Promise<OrganizationDto> {
    return this.account.organization(c);
  }

  @Patch('organization')
  @ApiOperation({ summary: 'Rename the organization (owner or admin)' })
  @ApiOkResponse({ type: OrganizationDto })
  @ApiForbiddenResponse({ description: 'Members may not', type: ErrorResponseDto })
  renameOrganization(@CurrentUser() c: Caller, @Body() body: UpdateOrganizationDto): Promise<OrganizationDto> {
    return this.account.renameOrganization(c, body.name);
  }

  @Get('profile')
  @ApiOperation({ summary: 'The signed-in user' })
  @ApiOkResponse({ type: MemberDto })
  profile(@CurrentUser() c: Caller): Promise<MemberDto> {
    return this.account.profile(c);
  }

  @Patch('profile')
  @ApiOperation({ summary: "Change the password (needs the current one); the user's other sessions end" })
  @ApiOkResponse({ type: MemberDto })
  @ApiBadRequestResponse({ description: 'Wrong current password or weak new one', type: ErrorResponseDto })
  updateProfile(@CurrentUser() c: Caller, @Body() body: UpdateProfileDto): Promise<MemberDto> {
    return this.account.changePassword(c, body.current_password, body.new_password);
  }

  @Get('team')
  @ApiOperation({ summary: 'Members and open invitations (owner or admin)' })
  @ApiOkResponse({ type: TeamDto })
  @ApiForbiddenResponse({ description: 'Members may not', type: ErrorResponseDto })
  team(@CurrentUser() c: Caller): Promise<TeamDto> {
    return this.account.team(c);
  }

  @Post('team/invitations')
  @ApiOperation({ summary: 'Invite by mail (owner or admin with a verified address)' })
  @ApiCreatedResponse({ type: InvitationDto })
  @ApiForbiddenResponse({ description: 'Members may not; EMAIL_NOT_VERIFIED', type: ErrorResponseDto })
  @ApiConflictResponse({ description: 'The address already has an account', type: ErrorResponseDto })
  invite(@CurrentUser() c: Caller, @Body() body: CreateInvitationDto): Promise<InvitationDto> {
    return this.account.invite(c, body.email, body.role);
  }

  @Post('team/transfer-ownership')
  @HttpCode(200)
  @ApiOperation({ summary: 'Make another member the owner; the current owner becomes admin (owner only)' })
  @ApiOkResponse({ type: MemberDto })
  @ApiForbiddenResponse({ description: 'Only the owner', type: ErrorResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  transfer(@CurrentUser() c: Caller, @Body() body: TransferOwnershipDto): Promise<MemberDto> {
    return this.account.transferOwnership(c, body.user_id);
  }

  @Patch('team/:userId')
  @ApiOperation({ summary: "Change a member's role to admin or member (owner or admin)" })
  @ApiOkResponse({ type: MemberDto })
  @ApiConflictResponse({ description: 'The owner cannot be demoted', type: ErrorResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  changeRole(
    @CurrentUser() c: Caller,
    @Param('userId', UuidPipe) userId: string,
    @Body() body: UpdateMemberDto,
  ): Promise<MemberDto> {
    return this.account.changeRole(c, userId, body.role);
  }

  @Delete('team/:userId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove a member; their sessions end at once (owner or admin)' })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiConflictResponse({ description: 'The owner cannot be removed', type: ErrorResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  async remove(@CurrentUser() c: Caller, @Param('userId', UuidPipe) userId: string): Promise<void> {
    await this.account.remove(c, userId);
  }
}

/** M2: portal API keys, the same keys the admin API makes, through the same service. */
@ApiTags('v1 api keys')
@UserEndpoint()
@Controller('v1/api-keys')
export class PortalApiKeysController {
  constructor(
    private readonly account: AccountService,
    private readonly admin: AdminService,
  ) {}

  @Get()
  @ApiOperation({ summary: "The organization's API keys (prefixes only; owner or admin)" })
  @ApiOkResponse({ type: ApiKeyListDto })
  async list(@CurrentUser() c: Caller): Promise<ApiKeyListDto> {
    await this.account.manager(c);
    return { keys: await this.admin.listApiKeys(c.tenantId) };
  }

  @Post()
  @ApiOperation({ summary: 'Create an API key; the raw key is in this answer only (owner or admin, verified)' })
  @ApiCreatedResponse({ type: CreatedApiKeyDto })
  @ApiForbiddenResponse({ description: 'Members may not; EMAIL_NOT_VERIFIED', type: ErrorResponseDto })
  async create(@CurrentUser() c: Caller, @Body() body: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    await this.account.manager(c, { verified: true });
    return this.admin.createApiKey(c.tenantId, body, { actor: `user:${c.userId}`, ip: c.client.ip });
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke an API key at once (owner or admin)' })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  async revoke(@CurrentUser() c: Caller, @Param('id', UuidPipe) id: string): Promise<void> {
    await this.account.manager(c);
    await this.admin.revokeApiKey(id, { actor: `user:${c.userId}`, ip: c.client.ip }, c.tenantId);
  }
}
