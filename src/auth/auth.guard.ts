import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AppConfig } from '../config/app-config.js';
import { AppError } from '../common/errors.js';
import { requestContext } from '../common/request-context.js';
import { TenantsRepository } from '../tenants/tenants.repository.js';
import { actingForTenant } from '../database/tenant-scope.js';
import { ApiKeysService } from './api-keys.service.js';
import type { AuthContext, AuthenticatedRequest } from './auth-context.js';
import { AuthFailureThrottle } from './auth-failure-throttle.js';
import { IS_ADMIN, IS_PUBLIC, IS_USER, ALLOW_UNVERIFIED } from './decorators.js';
import { SessionRevocations } from './session-revocations.js';
import { verifyAdminToken, verifyTenantToken } from './tokens.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : '';
}

/**
 * The one authentication step (SDF-SPEC Authentication, S6). X-API-Key first, else a bearer JWT;
 * both present: the API key decides. On a route marked `@AdminEndpoint()` only an admin JWT passes:
 * none or a bad one is 401, valid tenant credentials are 403; on every other route an admin JWT is
 * 403. Which kind a route is comes from its metadata, never from how the request spelled the path.
 * Failed attempts are counted per client address and answered 429 past the limit (AuthFailureThrottle).
 * The resolved context is the only source of the tenant.
 */
/** Methods that change nothing. */
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(AppConfig) private readonly config: AppConfig,
    private readonly apiKeys: ApiKeysService,
    private readonly tenants: TenantsRepository,
    private readonly failures: AuthFailureThrottle,
    private readonly revocations: SessionRevocations,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http') return true;
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [ctx.getHandler(), ctx.getClass()])) return true;
    const req = ctx.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    const admin = this.reflector.getAllAndOverride<boolean>(IS_ADMIN, [ctx.getHandler(), ctx.getClass()]) === true;
    const ip = req.ip ?? 'unknown';
    await this.failures.assertAllowed(ip);
    try {
      req.auth = admin ? await this.authenticateAdmin(req) : await this.authenticateTenant(req);
    } catch (err) {
      if (err instanceof AppError && err.status === 401) await this.failures.recordFailure(ip);
      throw err;
    }
    if (req.tenant) requestContext.setTenant(req.tenant.id);
    // An operator's request on one tenant's path acts for that tenant: its transactions see that tenant's
    // rows alone (row-level security) and its log lines name it. Elsewhere an operator acts for none.
    else if (admin && typeof req.params?.tenantId === 'string' && UUID.test(req.params.tenantId)) {
      requestContext.setTenant(req.params.tenantId);
    }
    const userRoute = this.reflector.getAllAndOverride<boolean>(IS_USER, [ctx.getHandler(), ctx.getClass()]) === true;
    if (userRoute && !(req.auth.kind === 'tenant_jwt' && req.auth.sessionId)) {
      throw AppError.forbidden('This endpoint takes the access token of a signed-in user');
    }
    // Managed deployment: until the user's address is verified, their tokens read and do not write.
    if (req.auth.kind === 'tenant_jwt' && req.auth.unverified && !READS.has(req.method)) {
      const allowed = this.reflector.getAllAndOverride<boolean>(ALLOW_UNVERIFIED, [ctx.getHandler(), ctx.getClass()]);
      if (allowed !== true) {
        throw new AppError(
          403,
          'EMAIL_NOT_VERIFIED',
          'Verify your email address first: open the link in the mail we sent you (POST /v1/auth/verify-email/resend ' +
            'sends a new one), then sign in again or refresh your token',
        );
      }
    }
    return true;
  }

  private async authenticateTenant(req: Request & AuthenticatedRequest): Promise<AuthContext> {
    const apiKey = req.headers['x-api-key'];
    if (apiKey !== undefined) {
      const verified = typeof apiKey === 'string' ? await this.apiKeys.verify(apiKey) : null;
      if (!verified) throw AppError.unauthorized('Invalid, expired or revoked API key');
      req.tenant = verified.tenant;
      return {
        kind: 'api_key',
        tenantId: verified.tenant.id,
        actor: `api_key:${verified.key.key_prefix}`,
        keyId: verified.key.id,
        keyPrefix: verified.key.key_prefix,
      };
    }
    const token = bearerToken(req);
    if (token === undefined) throw AppError.unauthorized('Credentials required: X-API-Key or Authorization: Bearer');
    const claims = token
      ? verifyTenantToken(token, this.config.secrets.jwtSecret, this.config.tenantTokenTtlSeconds)
      : 'invalid';
    if (claims === 'expired') throw AppError.unauthorized('Token expired');
    if (claims === 'invalid') {
      if (token && typeof verifyAdminToken(token, this.config.secrets.adminJwtSecret) === 'object') {
        throw AppError.forbidden('This endpoint takes tenant credentials, not an admin token');
      }
      throw AppError.unauthorized('Invalid token');
    }
    // A revoked session's access tokens stop at once (logout, rotation, reuse, removal from the team).
    if (claims.sid !== undefined && (await this.revocations.isRevoked(claims.sid))) {
      throw AppError.unauthorized('Session ended');
    }
    // Looked up on a connection named for the tenant the token claims (the row is visible there only if it
    // is that tenant's), which is the tenant the request's own statements then act for: no renaming.
    const tenant = UUID.test(claims.tenant_id)
      ? await actingForTenant(claims.tenant_id, () => this.tenants.findForAuth(claims.tenant_id), 'auth')
      : null;
    if (!tenant) throw AppError.unauthorized('Invalid token');
    req.tenant = tenant;
    // The `user:` prefix keeps a subject from ever passing for another kind of actor (api_key:, admin:).
    return {
      kind: 'tenant_jwt',
      tenantId: tenant.id,
      actor: `user:${claims.sub}`,
      subject: claims.sub,
      ...(claims.sid !== undefined ? { sessionId: claims.sid } : {}),
      ...(claims.role ? { role: claims.role } : {}),
      ...(claims.unverified ? { unverified: true as const } : {}),
    };
  }

  private async authenticateAdmin(req: Request): Promise<AuthContext> {
    const apiKey = req.headers['x-api-key'];
    if (apiKey !== undefined) {
      const verified = typeof apiKey === 'string' ? await this.apiKeys.verify(apiKey) : null;
      if (!verified) throw AppError.unauthorized('Invalid, expired or revoked API key');
      throw AppError.forbidden('Admin endpoints require an admin token');
    }
    const token = bearerToken(req);
    if (!token) throw AppError.unauthorized('Admin token required');
    const admin = verifyAdminToken(token, this.config.secrets.adminJwtSecret);
    if (typeof admin === 'object') return { kind: 'admin', actor: `admin:${admin.sub}`, subject: admin.sub };
    if (
      typeof verifyTenantToken(token, this.config.secrets.jwtSecret, this.config.tenantTokenTtlSeconds) === 'object'
    ) {
      throw AppError.forbidden('Admin endpoints require an admin token');
    }
    throw AppError.unauthorized(admin === 'expired' ? 'Token expired' : 'Invalid token');
  }
}
