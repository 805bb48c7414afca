import { applyDecorators, Body, Controller, HttpCode, Logger, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiHeader,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { TenantAuth } from '../auth/auth-context.js';
import { AllowUnverified, Public, Tenant, UserEndpoint } from '../auth/decorators.js';
import { ApiError, JsonBodyErrors, type ErrorCase } from '../openapi/decorators.js';
import { AccountService } from './account.service.js';
import { AuthFlowsService } from './auth-flows.service.js';
import { ThrottledPerAddress } from './auth-route-throttle.js';
import { AcceptInvitationDto } from './dto/account.dto.js';
import { Client } from './client-info.js';
import {
  EmailVerifiedDto,
  ForgotPasswordDto,
  LoginDto,
  MailTokenDto,
  RefreshDto,
  RegisterDto,
  RegisteredDto,
  RegistrationAcceptedDto,
  ResetPasswordDto,
  SessionRefreshDto,
  SessionTokenDto,
  TokenPairDto,
  TotpRequiredDto,
} from './dto/auth.dto.js';
import { SessionsService, type ClientInfo } from './sessions.service.js';
import { sessionOf } from './session-of.js';
import {
  SESSION_COOKIE,
  SESSION_HEADER,
  SESSION_PATH,
  clearSessionCookie,
  sessionCallRefusal,
  sessionCookie,
  setSessionCookie,
} from './session-cookie.js';
import { AppError } from '../common/errors.js';
import { RecoveryCodesDto, TotpCodeDto, TotpSetupDto, TotpValidateDto } from './dto/totp.dto.js';
import { TotpService } from './totp.service.js';

const WEAK_PASSWORD: ErrorCase = {
  name: 'weak_password',
  code: 'VALIDATION_ERROR',
  message: 'Password does not meet the rules',
  details: [{ path: '/password', message: 'must be at least 10 characters' }],
};
const ACCOUNT_EXISTS: ErrorCase = {
  name: 'account_exists',
  code: 'CONFLICT',
  message: 'An account with this email already exists',
};
const INVALID_MAIL_TOKEN: ErrorCase = {
  name: 'invalid_token',
  code: 'VALIDATION_ERROR',
  message: 'Invalid, expired or used token',
  details: [{ path: '/token', message: 'not valid' }],
};
const INVALID_CODE: ErrorCase = { name: 'invalid_code', code: 'UNAUTHORIZED', message: 'Invalid code' };
const TOTP_ENABLED: ErrorCase = {
  name: 'already_enabled',
  code: 'INVALID_STATE',
  message: 'Two-factor authentication is already enabled',
};

/** The cookie-session routes' header and their two refusals (sessionCallRefusal), described once. */
const SessionCall = () =>
  applyDecorators(
    ApiHeader({
      name: SESSION_HEADER,
      required: true,
      description: 'Any non-empty value; shows the call comes from a page of this origin',
      schema: { type: 'string', example: '1' },
    }),
    ApiError(400, `No ${SESSION_HEADER} header`, {
      name: 'no_session_header',
      code: 'VALIDATION_ERROR',
      message: `The ${SESSION_HEADER} header is required`,
    }),
    ApiError(403, 'Called from a page of another origin (Origin or Sec-Fetch-Site)', {
      name: 'other_origin',
      code: 'FORBIDDEN',
      message: 'Called from another origin: the cookie alone is not enough',
    }),
  );

/** Refuses a cookie-session call that sessionCallRefusal refuses, in the words SessionCall documents. */
function assertSessionCall(req: Request): void {
  const refusal = sessionCallRefusal(req);
  if (refusal === 'foreign') throw AppError.forbidden('Called from another origin: the cookie alone is not enough');
  if (refusal === 'no-header') {
    throw AppError.badRequest(`The ${SESSION_HEADER} header is required`, [
      { path: SESSION_HEADER, message: 'required: shows the call comes from a page of this origin' },
    ]);
  }
}

@ApiTags('v1 auth')
@Controller('v1/auth')
export class AuthController {
  private readonly logger = new Logger(AuthController.name);

  constructor(
    private readonly flows: AuthFlowsService,
    private readonly sessions: SessionsService,
    private readonly totp: TotpService,
    private readonly account: AccountService,
  ) {}

  @Public()
  @Post('accept-invitation')
  @ThrottledPerAddress('accept-invitation')
  @ApiOperation({
    summary: 'Join an organization with the token from an invitation mail and a password',
    description:
      'Creates the invited user with the role of the invitation and a verified address (the mail reached ' +
      'them). The invitation is single use. No credentials; sign in afterwards with POST /v1/auth/login.',
  })
  @ApiCreatedResponse({ type: RegisteredDto })
  @JsonBodyErrors('Invalid, expired or used invitation; weak password', WEAK_PASSWORD, {
    ...INVALID_MAIL_TOKEN,
    name: 'invalid_invitation',
    message: 'Invalid, expired or used invitation',
  })
  @ApiError(409, 'The address already has an account', ACCOUNT_EXISTS)
  @ApiError(410, 'The invitation was used, cancelled, resent, retired by another accepted one, or has expired', {
    name: 'invitation_gone',
    code: 'INVITATION_GONE',
    message: 'This invitation was used, cancelled or has expired; ask the organization for a new one',
    details: [{ path: '/token', message: 'no longer valid' }],
  })
  acceptInvitation(@Body() body: AcceptInvitationDto, @Client() client: ClientInfo): Promise<RegisteredDto> {
    return this.account.acceptInvitation(body.token, body.password, client, body.name);
  }

  @Public()
  @Post('register')
  @HttpCode(202)
  @ThrottledPerAddress('register')
  @ApiOperation({
    summary: 'Sign up: an organization and its owner; the next step is in the mail',
    description:
      'Creates the organization (a tenant on the Free plan) and its owner, and mails a verification link ' +
      '(24 h). Some actions (inviting, creating API keys) wait for the verified address. When the address ' +
      'already has an account, nothing is created and its owner is mailed a note with a sign-in link ' +
      'instead; the answer is the same either way, so it never tells who has an account. No credentials.',
  })
  @ApiAcceptedResponse({ type: RegistrationAcceptedDto, description: 'A mail is on its way to the address' })
  @JsonBodyErrors('Invalid body or weak password', WEAK_PASSWORD)
  @ApiError(409, 'Slug taken', { name: 'slug_taken', code: 'CONFLICT', message: "The slug 'acme' is taken" })
  register(@Body() body: RegisterDto, @Client() client: ClientInfo): Promise<RegistrationAcceptedDto> {
    return this.flows.register(body, client);
  }

  @Public()
  @Post('verify-email')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Confirm an email address with the token from the mail (single use, 24 h)',
    description: 'Marks the address verified. The token is good once and for 24 hours. No credentials. Audited.',
  })
  @ApiOkResponse({ type: EmailVerifiedDto })
  @JsonBodyErrors('Invalid, expired or used token', INVALID_MAIL_TOKEN)
  verifyEmail(@Body() body: MailTokenDto, @Client() client: ClientInfo): Promise<EmailVerifiedDto> {
    return this.flows.verifyEmail(body.token, client);
  }

  @Public()
  @Post('password/forgot')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Forgot password: mail a link to choose a new one',
    description:
      'When the address belongs to an account with a password, mails it a single-use link to ' +
      '/app/reset-password, valid for 30 minutes (at most one a minute; a newer link retires the older). ' +
      'The answer is the same, at once, whether or not the address exists. No credentials. Audited.',
  })
  @ApiAcceptedResponse({ description: 'Accepted; a mail follows if the address has an account' })
  @JsonBodyErrors('Missing email')
  @ThrottledPerAddress('password-forgot')
  forgotPassword(@Body() body: ForgotPasswordDto, @Client() client: ClientInfo): void {
    // Not awaited: the answer must not take longer when the address exists.
    void this.flows.forgotPassword(body, client).catch((error: unknown) => {
      this.logger.error({ msg: 'password reset mail failed', error: String(error) }, 'Accounts');
    });
  }

  @Public()
  @Post('password/reset')
  @HttpCode(204)
  @ApiOperation({
    summary: "Choose a new password with the mailed link's token; every session of the user ends",
    description:
      'Sets the password (the same rules as at sign-up) and signs the user out everywhere: every refresh ' +
      'token and access token of theirs stops working. The token is good once and for 30 minutes. No ' +
      'credentials. Audited.',
  })
  @ApiNoContentResponse({ description: 'The password is changed; sign in with it' })
  @JsonBodyErrors('Invalid, expired or used token, or a password that breaks the rules', INVALID_MAIL_TOKEN)
  @ThrottledPerAddress('password-reset')
  resetPassword(@Body() body: ResetPasswordDto, @Client() client: ClientInfo): Promise<void> {
    return this.flows.resetPassword(body, client);
  }

  @UserEndpoint()
  @Post('verify-email/resend')
  @AllowUnverified()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Send a new verification mail (at most one a minute)',
    description: 'Queues a new verification mail; earlier links stop working. At most one a minute per user.',
  })
  @ApiNoContentResponse({ description: 'Queued' })
  @ApiError(409, 'The address is verified already', {
    name: 'verified',
    code: 'INVALID_STATE',
    message: 'The email address is already verified',
  })
  @ThrottledPerAddress('verify-email-resend', {
    name: 'resend_too_soon',
    code: 'RATE_LIMITED',
    message: 'A verification mail was sent recently',
  })
  async resend(@Tenant() auth: TenantAuth, @Client() client: ClientInfo): Promise<void> {
    const { userId } = sessionOf(auth);
    await this.flows.resendVerification(auth.tenantId, userId, client);
  }

  @Public()
  @Post('login')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Log in; with TOTP enabled the answer asks for a code instead of giving tokens',
    description:
      'Email and password give an access token (15 minutes) and a refresh token. With TOTP on, the answer is ' +
      '`totp_required` with a session token for POST /v1/auth/totp/validate instead. Failed logins are counted ' +
      'per address and per account; past the limit the answer is 429. No credentials. Audited.',
  })
  @JsonBodyErrors('Missing email or password')
  @ApiExtraModels(TokenPairDto, TotpRequiredDto)
  @ApiOkResponse({
    schema: { oneOf: [{ $ref: getSchemaPath(TokenPairDto) }, { $ref: getSchemaPath(TotpRequiredDto) }] },
  })
  @ApiError(401, 'Unknown email or wrong password (one answer for both)', {
    name: 'invalid_login',
    code: 'UNAUTHORIZED',
    message: 'Invalid email or password',
  })
  @ThrottledPerAddress('login', {
    name: 'too_many_failures',
    code: 'RATE_LIMITED',
    message: 'Too many failed logins; try again later',
  })
  login(@Body() body: LoginDto, @Client() client: ClientInfo): Promise<TokenPairDto | TotpRequiredDto> {
    return this.flows.login(body, client);
  }

  @Public()
  @Post('refresh')
  @HttpCode(200)
  @ApiOperation({
    summary: 'New tokens for a refresh token; the refresh token rotates on every use',
    description:
      'Answers a new access token and a new refresh token; the one sent stops working. A used refresh token ' +
      'presented again ends every session of its user (a stolen copy is worthless once either side uses it). ' +
      'No credentials.',
  })
  @ApiOkResponse({ type: TokenPairDto })
  @JsonBodyErrors('Missing refresh_token')
  @ApiError(401, 'Invalid, expired or revoked refresh token', {
    name: 'invalid_refresh_token',
    code: 'UNAUTHORIZED',
    message: 'Invalid, expired or revoked refresh token',
  })
  refresh(@Body() body: RefreshDto, @Client() client: ClientInfo): Promise<TokenPairDto> {
    return this.sessions.refresh(body.refresh_token, client);
  }

  @UserEndpoint()
  @Post('logout')
  @AllowUnverified()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Revoke the current session: its refresh token and access tokens stop working',
    description: "Ends this session at once; the user's other sessions stay. Audited.",
  })
  @ApiNoContentResponse({ description: 'Logged out' })
  async logout(
    @Tenant() auth: TenantAuth,
    @Client() client: ClientInfo,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    const { userId, sessionId } = sessionOf(auth);
    await this.flows.logout(auth.tenantId, userId, sessionId, client);
    // The web front end's refresh cookie, if this session has one, goes with it.
    clearSessionCookie(res);
  }

  @Public()
  @Post('session/refresh')
  @HttpCode(200)
  @ApiOperation({
    summary: "The web front end's session: a new access token for the refresh token in its cookie",
    description:
      `The cookie variant of POST /v1/auth/refresh, for the pages at /app/: the refresh token lives in the ` +
      `HttpOnly, Secure, SameSite=Strict cookie ${SESSION_COOKIE} sent only to ${SESSION_PATH}/*, rotates on ` +
      `every call (a reused one ends every session of its user, as with the JSON variant, but for the token ` +
      `rotated last, presented again within SESSION_REFRESH_REPEAT_MS: that answers its successor once more, ` +
      `for a page left while its renewal was under way), and never reaches ` +
      `the page's script. Right after a sign-in the page sends the refresh token once in the body, which moves ` +
      `it into the cookie. Every call must carry the ${SESSION_HEADER} header and, where the browser sends ` +
      `them, an Origin and Sec-Fetch-Site of this origin: the cookie alone is refused (400 without the header, ` +
      `403 from another origin). ` +
      `POST /v1/auth/logout clears the cookie.`,
  })
  @SessionCall()
  @ApiOkResponse({ type: SessionTokenDto })
  @ApiNoContentResponse({
    description: 'No session cookie and no refresh token: not signed in (a page loads this way)',
  })
  @JsonBodyErrors('refresh_token is not a string')
  @ApiError(401, 'An invalid, expired or revoked refresh token; the cookie is cleared', {
    name: 'invalid_session',
    code: 'UNAUTHORIZED',
    message: 'Invalid, expired or revoked refresh token',
  })
  async sessionRefresh(
    @Body() body: SessionRefreshDto,
    @Client() client: ClientInfo,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<SessionTokenDto | undefined> {
    assertSessionCall(req);
    const presented = body?.refresh_token ?? sessionCookie(req);
    if (!presented) {
      res.status(204);
      return undefined;
    }
    let tokens: TokenPairDto;
    try {
      tokens = await this.sessions.refreshCookie(presented, client);
    } catch (error) {
      clearSessionCookie(res);
      throw error;
    }
    setSessionCookie(res, tokens.refresh_token);
    res.setHeader('Cache-Control', 'no-store');
    return { access_token: tokens.access_token, expires_in: tokens.expires_in, token_type: tokens.token_type };
  }

  @Public()
  @Post('session/logout')
  @HttpCode(204)
  @ApiOperation({
    summary: "The web front end's logout: ends the session of the refresh token in its cookie",
    description:
      `The cookie variant of POST /v1/auth/logout, which works without a live access token: the session ` +
      `whose refresh token is in the ${SESSION_COOKIE} cookie ends at once (its access tokens too) and the ` +
      `cookie is cleared. The same defence as the cookie refresh: the ${SESSION_HEADER} header and, where the ` +
      `browser names them, an Origin and Sec-Fetch-Site of this origin. Without a cookie there is nothing to ` +
      `end and the answer is 204 too. Audited as logout.`,
  })
  @SessionCall()
  @ApiNoContentResponse({ description: 'Signed out; the cookie is cleared' })
  async sessionLogout(
    @Client() client: ClientInfo,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    assertSessionCall(req);
    const presented = sessionCookie(req);
    clearSessionCookie(res);
    if (presented) await this.flows.logoutByRefreshToken(presented, client);
  }

  @UserEndpoint()
  @Post('totp/setup')
  @AllowUnverified()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Start TOTP enrolment: a new secret, its otpauth URL and QR code (not active until enabled)',
    description:
      'A new secret for an authenticator app, as text, otpauth URL and QR code. Nothing changes at login ' +
      'until POST /v1/auth/totp/enable confirms it with a code; calling this again replaces the secret.',
  })
  @ApiOkResponse({ type: TotpSetupDto })
  @ApiError(409, 'TOTP is on already', TOTP_ENABLED)
  setupTotp(@Tenant() auth: TenantAuth, @Client() client: ClientInfo): Promise<TotpSetupDto> {
    return this.totp.setup(auth.tenantId, sessionOf(auth).userId, client);
  }

  @UserEndpoint()
  @Post('totp/enable')
  @AllowUnverified()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Turn TOTP on with a current code; answers the ten recovery codes, once',
    description:
      'Confirms the secret of POST /v1/auth/totp/setup with a current code and turns TOTP on: logins then ' +
      'need a code. The ten single-use recovery codes are in this answer only. Audited.',
  })
  @ApiOkResponse({ type: RecoveryCodesDto })
  @JsonBodyErrors('A code shorter than 6 or longer than 32 characters')
  @ApiError(401, 'Wrong or already used code', INVALID_CODE)
  @ApiError(409, 'TOTP is on already, or setup was not called', TOTP_ENABLED, {
    name: 'no_setup',
    code: 'INVALID_STATE',
    message: 'Call /v1/auth/totp/setup first',
  })
  enableTotp(
    @Tenant() auth: TenantAuth,
    @Body() body: TotpCodeDto,
    @Client() client: ClientInfo,
  ): Promise<RecoveryCodesDto> {
    return this.totp.enable(auth.tenantId, sessionOf(auth).userId, body.code, client);
  }

  @UserEndpoint()
  @Post('totp/disable')
  @AllowUnverified()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Turn TOTP off with a current code or a recovery code',
    description: 'Logins need no code any more; the secret and the recovery codes are dropped. Audited.',
  })
  @ApiNoContentResponse({ description: 'Disabled' })
  @JsonBodyErrors('A code shorter than 6 or longer than 32 characters')
  @ApiError(401, 'Wrong or already used code', INVALID_CODE)
  @ApiError(409, 'TOTP is not on', {
    name: 'not_enabled',
    code: 'INVALID_STATE',
    message: 'Two-factor authentication is not enabled',
  })
  async disableTotp(@Tenant() auth: TenantAuth, @Body() body: TotpCodeDto, @Client() client: ClientInfo) {
    await this.totp.disable(auth.tenantId, sessionOf(auth).userId, body.code, client);
  }

  @Public()
  @Post('totp/validate')
  @ThrottledPerAddress('totp-validate', {
    name: 'totp_backoff',
    code: 'RATE_LIMITED',
    message: 'Too many wrong codes; wait before trying again',
  })
  @ApiError(403, 'Too many wrong codes locked the second factor: a recovery code still signs in and lifts the lock', {
    name: 'totp_locked',
    code: 'TOTP_LOCKED',
    message: 'Two-factor sign-in is locked after too many wrong codes: sign in with one of your recovery codes instead',
  })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Finish a login that answered totp_required: session_token and a code give tokens',
    description:
      'The session token of the login answer (single use, 5 minutes) and a current TOTP code or an unused ' +
      'recovery code give the tokens of a password login. No credentials. Audited.',
  })
  @ApiOkResponse({ type: TokenPairDto })
  @JsonBodyErrors('Missing session_token, or a code shorter than 6 or longer than 32 characters')
  @ApiError(401, 'Wrong, replayed or old code; unknown session token', INVALID_CODE, {
    name: 'invalid_session_token',
    code: 'UNAUTHORIZED',
    message: 'Invalid or expired session token',
  })
  validateTotp(@Body() body: TotpValidateDto, @Client() client: ClientInfo): Promise<TokenPairDto> {
    return this.totp.validate(body.session_token, body.code, client);
  }
}
