import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { AuthenticatedRequest } from '../auth/auth-context.js';
import { AppError } from '../common/errors.js';
import type { Caller } from './account.service.js';

/** The signed-in user of a /v1 request, from the authentication step's context (never from the body). */
export const CurrentUser = createParamDecorator((_: unknown, ctx: ExecutionContext): Caller =>
  callerOf(ctx.switchToHttp().getRequest<Request & AuthenticatedRequest>()),
);

export function callerOf(req: Request & AuthenticatedRequest): Caller {
  const auth = req.auth;
  if (auth?.kind !== 'tenant_jwt' || !auth.sessionId) {
    throw AppError.forbidden('This endpoint takes the access token of a signed-in user');
  }
  const agent = req.headers['user-agent'];
  return {
    tenantId: auth.tenantId,
    userId: auth.subject,
    sessionId: auth.sessionId,
    client: { ip: req.ip ?? null, userAgent: typeof agent === 'string' ? agent : null },
  };
}
