import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
  getSchemaPath,
} from '@nestjs/swagger';
import type { TenantAuth } from '../auth/auth-context.js';
import { Public, Tenant, UserEndpoint } from '../auth/decorators.js';
import { ErrorResponseDto } from '../common/error-response.dto.js';
import { AccountService } from './account.service.js';
import { AuthFlowsService } from './auth-flows.service.js';
import { AcceptInvitationDto } from './dto/account.dto.js';
import { Client } from './client-info.js';
import {
  EmailVerifiedDto,
  LoginDto,
  MailTokenDto,
  RefreshDto,
  RegisterDto,
  RegisteredDto,
  TokenPairDto,
  TotpRequiredDto,
} from './dto/auth.dto.js';
import { SessionsService, type ClientInfo } from './sessions.service.js';
import { sessionOf } from './session-of.js';
import { RecoveryCodesDto, TotpCodeDto, TotpSetupDto, TotpValidateDto } from './dto/totp.dto.js';
import { TotpService } from './totp.service.js';

@ApiTags('v1 auth')
@Controller('v1/auth')
export class AuthController {
  constructor(
    private readonly flows: AuthFlowsService,
    private readonly sessions: SessionsService,
    private readonly totp: TotpService,
    private readonly account: AccountService,
  ) {}

  @Public()
  @Post('accept-invitation')
  @ApiOperation({ summary: 'Join an organization with the token from an invitation mail and a password' })
  @ApiCreatedResponse({ type: RegisteredDto })
  @ApiBadRequestResponse({ description: 'Invalid, expired or used invitation; weak password', type: ErrorResponseDto })
  @ApiConflictResponse({ description: 'The address already has an account', type: ErrorResponseDto })
  acceptInvitation(@Body() body: AcceptInvitationDto, @Client() client: ClientInfo): Promise<RegisteredDto> {
    return this.account.acceptInvitation(body.token, body.password, client);
  }

  @Public()
  @Post('register')
  @ApiOperation({ summary: 'Create an organization and its owner; a verification mail goes out' })
  @ApiCreatedResponse({ type: RegisteredDto })
  @ApiBadRequestResponse({ description: 'Invalid body or weak password', type: ErrorResponseDto })
  @ApiConflictResponse({ description: 'Email or slug taken', type: ErrorResponseDto })
  register(@Body() body: RegisterDto, @Client() client: ClientInfo): Promise<RegisteredDto> {
    return this.flows.register(body, client);
  }

  @Public()
  @Post('verify-email')
  @HttpCode(200)
  @ApiOperation({ summary: 'Confirm an email address with the token from the mail (single use, 24 h)' })
  @ApiOkResponse({ type: EmailVerifiedDto })
  @ApiBadRequestResponse({ description: 'Invalid, expired or used token', type: ErrorResponseDto })
  verifyEmail(@Body() body: MailTokenDto, @Client() client: ClientInfo): Promise<EmailVerifiedDto> {
    return this.flows.verifyEmail(body.token, client);
  }

  @UserEndpoint()
  @Post('verify-email/resend')
  @HttpCode(204)
  @ApiOperation({ summary: 'Send a new verification mail (at most one a minute)' })
  @ApiNoContentResponse({ description: 'Queued' })
  async resend(@Tenant() auth: TenantAuth, @Client() client: ClientInfo): Promise<void> {
    const { userId } = sessionOf(auth);
    await this.flows.resendVerification(auth.tenantId, userId, client);
  }

  @Public()
  @Post('login')
  @HttpCode(200)
  @ApiOperation({ summary: 'Log in; with TOTP enabled the answer asks for a code instead of giving tokens' })
  @ApiExtraModels(TokenPairDto, TotpRequiredDto)
  @ApiOkResponse({
    schema: { oneOf: [{ $ref: getSchemaPath(TokenPairDto) }, { $ref: getSchemaPath(TotpRequiredDto) }] },
  })
  @ApiUnauthorizedResponse({ description: 'Unknown email or wrong password (one answer)', type: ErrorResponseDto })
  @ApiTooManyRequestsResponse({ description: 'Too many failed logins (Retry-After)', type: ErrorResponseDto })
  login(@Body() body: LoginDto, @Client() client: ClientInfo): Promise<TokenPairDto | TotpRequiredDto> {
    return this.flows.login(body, client);
  }

  @Public()
  @Post('refresh')
  @HttpCode(200)
  @ApiOperation({ summary: 'New tokens for a refresh token; the refresh token rotates on every use' })
  @ApiOkResponse({ type: TokenPairDto })
  @ApiUnauthorizedResponse({ description: 'Invalid, expired or revoked refresh token', type: ErrorResponseDto })
  refresh(@Body() body: RefreshDto, @Client() client: ClientInfo): Promise<TokenPairDto> {
    return this.sessions.refresh(body.refresh_token, client);
  }

  @UserEndpoint()
  @Post('logout')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke the current session: its refresh token and access tokens stop working' })
  @ApiNoContentResponse({ description: 'Logged out' })
  async logout(@Tenant() auth: TenantAuth, @Client() client: ClientInfo): Promise<void> {
    const { userId, sessionId } = sessionOf(auth);
    await this.flows.logout(auth.tenantId, userId, sessionId, client);
  }

  @UserEndpoint()
  @Post('totp/setup')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Start TOTP enrolment: a new secret, its otpauth URL and QR code (not active until enabled)',
  })
  @ApiOkResponse({ type: TotpSetupDto })
  setupTotp(@Tenant() auth: TenantAuth, @Client() client: ClientInfo): Promise<TotpSetupDto> {
    return this.totp.setup(auth.tenantId, sessionOf(auth).userId, client);
  }

  @UserEndpoint()
  @Post('totp/enable')
  @HttpCode(200)
  @ApiOperation({ summary: 'Turn TOTP on with a current code; answers the ten recovery codes, once' })
  @ApiOkResponse({ type: RecoveryCodesDto })
  @ApiUnauthorizedResponse({ description: 'Wrong or already used code', type: ErrorResponseDto })
  enableTotp(
    @Tenant() auth: TenantAuth,
    @Body() body: TotpCodeDto,
    @Client() client: ClientInfo,
  ): Promise<RecoveryCodesDto> {
    return this.totp.enable(auth.tenantId, sessionOf(auth).userId, body.code, client);
  }

  @UserEndpoint()
  @Post('totp/disable')
  @HttpCode(204)
  @ApiOperation({ summary: 'Turn TOTP off with a current code or a recovery code' })
  @ApiNoContentResponse({ description: 'Disabled' })
  @ApiUnauthorizedResponse({ description: 'Wrong or already used code', type: ErrorResponseDto })
  async disableTotp(@Tenant() auth: TenantAuth, @Body() body: TotpCodeDto, @Client() client: ClientInfo) {
    await this.totp.disable(auth.tenantId, sessionOf(auth).userId, body.code, client);
  }

  @Public()
  @Post('totp/validate')
  @HttpCode(200)
  @ApiOperation({ summary: 'Finish a login that answered totp_required: session_token and a code give tokens' })
  @ApiOkResponse({ type: TokenPairDto })
  @ApiUnauthorizedResponse({
    description: 'Wrong, replayed or old code; unknown session token',
    type: ErrorResponseDto,
  })
  validateTotp(@Body() body: TotpValidateDto, @Client() client: ClientInfo): Promise<TokenPairDto> {
    return this.totp.validate(body.session_token, body.code, client);
  }
}
