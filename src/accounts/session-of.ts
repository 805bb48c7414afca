import type { TenantAuth } from '../auth/auth-context.js';
import { AppError } from '../common/errors.js';

/** The user and session behind a /v1 request (the authentication step admits only user sessions there). */
export function sessionOf(auth: TenantAuth): { userId: string; sessionId: string } {
  if (auth.kind !== 'tenant_jwt' || !auth.sessionId) {
    throw AppError.forbidden('This endpoint takes the access token of a signed-in user');
  }
  return { userId: auth.subject, sessionId: auth.sessionId };
}
