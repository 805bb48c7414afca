import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyListDto, CreateApiKeyDto, CreatedApiKeyDto } from '../admin/dto/api-key.dto.js';
import { AdminService } from '../admin/admin.service.js';
import { AllowUnverified, UserEndpoint } from '../auth/decorators.js';
import { UuidPipe } from '../common/uuid.pipe.js';
import { ApiError, ERRORS, IdParam, JsonBodyErrors, notFound, type ErrorCase } from '../openapi/decorators.js';
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

const EMAIL_NOT_VERIFIED: ErrorCase = {
  name: 'email_not_verified',
  code: 'EMAIL_NOT_VERIFIED',
  message: 'Verify your email address first',
};

/** Owner or admin only; replaces UserEndpoint's 403 on the method, so it names every refusal. */
const ManagersOnly = (...more: ErrorCase[]) =>
  ApiError(
    403,
    "A member's token (owner or admin only)" +
      (more.length ? ', or an unverified email address' : '') +
      ", or not a signed-in user's token",
    ERRORS.managersOnly,
    ...more,
    ERRORS.notUserSession,
  );

const MemberId = () => IdParam('userId', 'User', 'No such member of this organization');
const InvitationId = () =>
  IdParam('invitationId', 'Invitation', 'No such open invitation (accepted, cancelled or expired ones are gone)');

@ApiTags('v1 account')
@UserEndpoint()
@Controller('v1/account')
export class AccountController {
  constructor(private readonly account: AccountService) {}

  @Get('organization')
  @ApiOperation({
    summary: 'The organization (tenant) of the signed-in user',
    description: 'Its name, slug, plan and creation time; any member may read it.',
  })
  @ApiOkResponse({ type: OrganizationDto })
  organization(@CurrentUser() c: Caller): Promise<OrganizationDto> {
    return this.account.organization(c);
  }

  @Patch('organization')
  @ApiOperation({
    summary: 'Rename the organization (owner or admin)',
    description: 'Changes the display name; the slug stays. Audited.',
  })
  @ApiOkResponse({ type: OrganizationDto })
  @JsonBodyErrors('An empty name or one over 200 characters')
  @ManagersOnly()
  renameOrganization(@CurrentUser() c: Caller, @Body() body: UpdateOrganizationDto): Promise<OrganizationDto> {
    return this.account.renameOrganization(c, body.name);
  }

  @Get('profile')
  @ApiOperation({
    summary: 'The signed-in user',
    description: 'Email, role, whether the address is verified and whether TOTP is on.',
  })
  @ApiOkResponse({ type: MemberDto })
  profile(@CurrentUser() c: Caller): Promise<MemberDto> {
    return this.account.profile(c);
  }

  @Patch('profile')
  @AllowUnverified()
  @ApiOperation({
    summary: "Change the display name, or the password (needs the current one; the user's other sessions end)",
    description:
      'Send `name` to change the display name, and/or `current_password` with `new_password` to change the ' +
      'password. The new password must have 10 to 256 characters and not be a common one. Every other session ' +
      'of the user ends at once; this one stays. Audited.',
  })
  @ApiOkResponse({ type: MemberDto })
  @JsonBodyErrors('Wrong current password or weak new one', {
    name: 'wrong_password',
    code: 'VALIDATION_ERROR',
    message: 'The current password is wrong',
    details: [{ path: '/current_password', message: 'wrong' }],
  })
  @ApiError(429, 'Too many wrong current passwords for this user or from this address (Retry-After)', {
    name: 'too_many_wrong_passwords',
    code: 'RATE_LIMITED',
    message: 'Too many failed logins; try again later',
  })
  updateProfile(@CurrentUser() c: Caller, @Body() body: UpdateProfileDto): Promise<MemberDto> {
    return this.account.updateProfile(c, body);
  }

  @Get('team')
  @ApiOperation({
    summary: 'Members and open invitations (owner or admin)',
    description: 'Every user of the organization with their role, and the invitations not yet accepted nor expired.',
  })
  @ApiOkResponse({ type: TeamDto })
  @ManagersOnly()
  team(@CurrentUser() c: Caller): Promise<TeamDto> {
    return this.account.team(c);
  }

  @Post('team/invitations')
  @ApiOperation({
    summary: 'Invite by mail (owner or admin with a verified address)',
    description:
      'Sends an invitation mail with a single-use link; the invitee sets a password at ' +
      'POST /v1/auth/accept-invitation and joins with the given role. Audited. An address that has an ' +
      'account in another organization is answered the same (the answer never tells who has an account); ' +
      'its mail explains that an account belongs to one organization, and carries no link.',
  })
  @ApiCreatedResponse({ type: InvitationDto })
  @JsonBodyErrors('A malformed email address or an unknown role')
  @ManagersOnly(EMAIL_NOT_VERIFIED)
  @ApiError(409, 'The address is already a member of this organization', {
    name: 'already_member',
    code: 'CONFLICT',
    message: 'This address is already a member of your organization',
  })
  invite(@CurrentUser() c: Caller, @Body() body: CreateInvitationDto): Promise<InvitationDto> {
    return this.account.invite(c, body.email, body.role);
  }

  @Get('team/invitations')
  @ApiOperation({
    summary: 'Open invitations with who sent them (owner or admin)',
    description: 'Invitations not yet accepted, cancelled nor expired, oldest first.',
  })
  @ApiOkResponse({ type: [InvitationDto] })
  @ManagersOnly()
  invitations(@CurrentUser() c: Caller): Promise<InvitationDto[]> {
    return this.account.invitations(c);
  }

  @Post('team/invitations/:invitationId/resend')
  @ApiOperation({
    summary: 'Send an open invitation again (owner or admin with a verified address)',
    description:
      'Mails a new link with a fresh expiry; the earlier link stops working. The answer is the new invitation ' +
      '(a new id). Audited.',
  })
  @ApiCreatedResponse({ type: InvitationDto })
  @InvitationId()
  @ManagersOnly(EMAIL_NOT_VERIFIED)
  resendInvitation(
    @CurrentUser() c: Caller,
    @Param('invitationId', UuidPipe) invitationId: string,
  ): Promise<InvitationDto> {
    return this.account.resendInvitation(c, invitationId);
  }

  @Delete('team/invitations/:invitationId')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Cancel an open invitation (owner or admin)',
    description: 'Its link stops working at once. Audited.',
  })
  @ApiNoContentResponse({ description: 'Cancelled' })
  @InvitationId()
  @ManagersOnly()
  async cancelInvitation(
    @CurrentUser() c: Caller,
    @Param('invitationId', UuidPipe) invitationId: string,
  ): Promise<void> {
    await this.account.cancelInvitation(c, invitationId);
  }

  @Post('team/transfer-ownership')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Make another member the owner; the current owner becomes admin (owner only)',
    description: 'There is always exactly one owner: the new one is set and the former one becomes admin. Audited.',
  })
  @ApiOkResponse({ type: MemberDto })
  @JsonBodyErrors('user_id missing or not a uuid')
  @ApiError(
    403,
    "Not the owner, or not a signed-in user's token",
    { name: 'not_owner', code: 'FORBIDDEN', message: 'Only the owner may transfer ownership' },
    ERRORS.notUserSession,
  )
  @ApiError(404, 'No such member of this organization', notFound('User'))
  @ApiError(409, 'The caller is already the owner', {
    name: 'already_owner',
    code: 'INVALID_STATE',
    message: 'You are already the owner',
  })
  transfer(@CurrentUser() c: Caller, @Body() body: TransferOwnershipDto): Promise<MemberDto> {
    return this.account.transferOwnership(c, body.user_id);
  }

  @Patch('team/:userId')
  @ApiOperation({
    summary: "Change a member's role to admin or member (owner or admin)",
    description: 'Ownership moves only by transfer, so the owner cannot be given another role here. Audited.',
  })
  @ApiOkResponse({ type: MemberDto })
  @MemberId()
  @JsonBodyErrors('A role other than admin or member')
  @ManagersOnly()
  @ApiError(409, 'The owner cannot be demoted', {
    name: 'owner',
    code: 'CONFLICT',
    message: 'The owner cannot be demoted; transfer ownership first',
  })
  changeRole(
    @CurrentUser() c: Caller,
    @Param('userId', UuidPipe) userId: string,
    @Body() body: UpdateMemberDto,
  ): Promise<MemberDto> {
    return this.account.changeRole(c, userId, body.role);
  }

  @Delete('team/:userId')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Remove a member; their sessions end at once (owner or admin)',
    description: 'Deletes the user; every session of theirs ends at once, access tokens included. Audited.',
  })
  @ApiNoContentResponse({ description: 'Removed' })
  @MemberId()
  @ManagersOnly()
  @ApiError(409, 'The owner cannot be removed', {
    name: 'owner',
    code: 'CONFLICT',
    message: 'The owner cannot be removed; transfer ownership first',
  })
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
  @ApiOperation({
    summary: "The organization's API keys (prefixes only; owner or admin)",
    description: 'The same keys the admin API lists: prefix, name, expiry and status, newest first; never a hash.',
  })
  @ApiOkResponse({ type: ApiKeyListDto })
  @ManagersOnly()
  async list(@CurrentUser() c: Caller): Promise<ApiKeyListDto> {
    await this.account.manager(c);
    return { keys: await this.admin.listApiKeys(c.tenantId) };
  }

  @Post()
  @ApiOperation({
    summary: 'Create an API key; the raw key is in this answer only (owner or admin, verified)',
    description:
      'The service keeps only a salted hash of the key and its prefix; store the raw key now. Audited with ' +
      'the user as actor.',
  })
  @ApiCreatedResponse({ type: CreatedApiKeyDto })
  @JsonBodyErrors('Missing name, or expires_at malformed or in the past')
  @ManagersOnly(EMAIL_NOT_VERIFIED)
  async create(@CurrentUser() c: Caller, @Body() body: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    await this.account.manager(c, { verified: true });
    return this.admin.createApiKey(c.tenantId, body, { actor: `user:${c.userId}`, ip: c.client.ip });
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Revoke an API key at once (owner or admin)',
    description: "The next request with the key is 401. Another organization's key is 404. Audited.",
  })
  @ApiNoContentResponse({ description: 'Revoked' })
  @IdParam('id', 'API key', "No such API key in this organization (another organization's is 404 too)")
  @ManagersOnly()
  async revoke(@CurrentUser() c: Caller, @Param('id', UuidPipe) id: string): Promise<void> {
    await this.account.manager(c);
    await this.admin.revokeApiKey(id, { actor: `user:${c.userId}`, ip: c.client.ip }, c.tenantId);
  }
}
