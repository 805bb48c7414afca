import { Controller, Delete, Get, HttpCode, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { TenantAuth } from '../auth/auth-context.js';
import { AllowUnverified, Tenant, UserEndpoint } from '../auth/decorators.js';
import { AppError } from '../common/errors.js';
import { UuidPipe } from '../common/uuid.pipe.js';
import { IdParam } from '../openapi/decorators.js';
import { AuthFlowsService } from './auth-flows.service.js';
import { Client } from './client-info.js';
import { deviceLabel } from './device-label.js';
import { SessionListDto } from './dto/auth.dto.js';
import { clearSessionCookie } from './session-cookie.js';
import { sessionOf } from './session-of.js';
import { SessionsService, type ClientInfo } from './sessions.service.js';

/** The signed-in user's own sessions: list them, end one, end them all ("log out everywhere"). */
@ApiTags('v1 auth')
@UserEndpoint()
@AllowUnverified()
@Controller('v1/auth/sessions')
export class SessionsController {
  constructor(
    private readonly sessions: SessionsService,
    private readonly flows: AuthFlowsService,
  ) {}

  @Get()
  @ApiOperation({
    summary: "The signed-in user's active sessions, with device and last use",
    description:
      'Every session of this user that is neither logged out nor expired, most recently used first, the ' +
      'current one marked. A session is one sign-in on one device (password, TOTP or SSO).',
  })
  @ApiOkResponse({ type: SessionListDto })
  async list(@Tenant() auth: TenantAuth): Promise<SessionListDto> {
    const { userId, sessionId } = sessionOf(auth);
    const rows = await this.sessions.listActive(auth.tenantId, userId);
    return {
      data: rows.map((s) => ({
        id: s.id,
        device: deviceLabel(s.user_agent),
        user_agent: s.user_agent,
        ip_address: s.ip_address,
        first_used_at: s.signed_in_at.toISOString(),
        last_used_at: s.created_at.toISOString(),
        expires_at: s.expires_at.toISOString(),
        current: s.id === sessionId,
      })),
    };
  }

  @Delete(':sessionId')
  @HttpCode(204)
  @ApiOperation({
    summary: 'End one of your sessions (a lost phone, a shared computer)',
    description:
      'Its refresh token and access tokens stop working at once. Ending the current session is a logout. Audited.',
  })
  @ApiNoContentResponse({ description: 'Ended' })
  @IdParam('sessionId', 'Session', 'No active session of yours with this id')
  async revokeOne(
    @Tenant() auth: TenantAuth,
    @Param('sessionId', UuidPipe) id: string,
    @Client() client: ClientInfo,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    const { userId, sessionId } = sessionOf(auth);
    const ended = await this.flows.endOwnSession(auth.tenantId, userId, id, client);
    if (!ended) throw AppError.notFound('Session');
    if (id === sessionId) clearSessionCookie(res);
  }

  @Delete()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Log out everywhere: end every session of yours, this one included',
    description:
      'Every refresh token and access token of the user stops working at once, on every device; the web ' +
      "front end's session cookie is cleared. Sign in again to go on. Audited.",
  })
  @ApiNoContentResponse({ description: 'Every session ended' })
  async revokeAll(
    @Tenant() auth: TenantAuth,
    @Client() client: ClientInfo,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    const { userId, sessionId } = sessionOf(auth);
    await this.flows.endAllSessions(auth.tenantId, userId, sessionId, client);
    clearSessionCookie(res);
  }
}
