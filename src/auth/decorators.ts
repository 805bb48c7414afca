import { applyDecorators, createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import { AppError } from '../common/errors.js';
import { ApiError, ERRORS } from '../openapi/decorators.js';
import type { AuthContext, AuthenticatedRequest, TenantAuth } from './auth-context.js';

export const IS_PUBLIC = 'sdf:public';
/** Marks admin routes; the authentication step reads it through the reflector, never the path's spelling. */
export const IS_ADMIN = 'sdf:admin';
export const SKIP_RATE_LIMIT = 'sdf:skip-rate-limit';
/** Marks routes that take only a user session's access token (the managed /v1 account routes). */
export const IS_USER = 'sdf:user';

/** OpenAPI security scheme names (see openapi/setup.ts). */
export const SECURITY = { apiKey: 'api-key', tenantJwt: 'tenant-jwt', adminJwt: 'admin-jwt' } as const;

/** No credentials and no rate limit (health, OpenAPI, public key sets). */
export const Public = () => SetMetadata(IS_PUBLIC, true);

export const ALLOW_UNVERIFIED = 'sdf:allow-unverified';
/**
 * A write that a user whose email address is not verified yet may make (asking for a new verification
 * mail, logging out, judging a file that is not stored); every other write answers 403 EMAIL_NOT_VERIFIED.
 */
export const AllowUnverified = () => SetMetadata(ALLOW_UNVERIFIED, true);

/**
 * S12: a tenant request past its rate limit, past a quota of its plan (managed deployment; routes marked
 * `@Unmetered()` spend none), or from an address with too many failed authentications; each answer
 * carries Retry-After.
 */
const Tenant429 = (metered = true) =>
  metered
    ? ApiError(
        429,
        "Past the tenant's rate limit (RATE_LIMITED), past a quota of the plan on the managed deployment " +
          '(QUOTA_EXCEEDED), or too many failed authentications from this address; Retry-After says when to ' +
          'try again',
        ERRORS.rateLimited,
        ERRORS.quotaExceeded,
        ERRORS.authFailures,
      )
    : ApiError(
        429,
        "Past the tenant's rate limit, or too many failed authentications from this address; Retry-After says " +
          'when to try again',
        ERRORS.rateLimited,
        ERRORS.authFailures,
      );

/**
 * Tenant routes: an API key or a tenant JWT (SDF-SPEC Authentication). `metered: false` documents a
 * route marked `@Unmetered()`, which no quota refuses.
 */
export const TenantEndpoint = ({ metered = true }: { metered?: boolean } = {}) =>
  applyDecorators(
    ApiSecurity(SECURITY.apiKey),
    ApiBearerAuth(SECURITY.tenantJwt),
    ApiError(
      401,
      'No credentials, or an unknown, expired or revoked API key or JWT',
      ERRORS.noCredentials,
      ERRORS.badApiKey,
      ERRORS.expiredToken,
    ),
    ApiError(403, 'An admin JWT: tenant endpoints take tenant credentials', ERRORS.adminTokenOnTenantPath),
    Tenant429(metered),
  );

/**
 * Managed account routes (/v1): a bearer access token of a signed-in user (one with a session), not
 * an API key or a service JWT; those are 403. The authentication step reads the marker.
 */
export const UserEndpoint = () =>
  applyDecorators(
    SetMetadata(IS_USER, true),
    ApiBearerAuth(SECURITY.tenantJwt),
    ApiError(
      401,
      'No access token, or an invalid, expired or revoked one (logout ends a session at once)',
      ERRORS.noCredentials,
      ERRORS.expiredToken,
      ERRORS.sessionEnded,
    ),
    ApiError(403, "Not a signed-in user's access token (an API key or a service JWT)", ERRORS.notUserSession),
    Tenant429(),
  );

/**
 * Admin routes (S6): only an admin JWT passes. The marker, not the path, is what the authentication
 * step enforces; a route under /admin/ without it fails the route-walk test.
 */
export const AdminEndpoint = () =>
  applyDecorators(
    SetMetadata(IS_ADMIN, true),
    ApiBearerAuth(SECURITY.adminJwt),
    ApiError(401, 'No admin token, or an invalid or expired one', ERRORS.noAdminToken, ERRORS.expiredToken),
    ApiError(403, 'Tenant credentials on an admin path', ERRORS.tenantCredentialsOnAdminPath),
    ApiError(
      429,
      'Too many failed authentications from this address (AUTH_FAILURE_LIMIT); Retry-After says when to try again',
      ERRORS.authFailures,
    ),
  );

function authOf(ctx: ExecutionContext): AuthContext {
  const auth = ctx.switchToHttp().getRequest<AuthenticatedRequest>().auth;
  if (!auth) throw AppError.unauthorized();
  return auth;
}

/** The tenant context resolved by the authentication step. */
export const Tenant = createParamDecorator((_: unknown, ctx: ExecutionContext): TenantAuth => {
  const auth = authOf(ctx);
  if (auth.kind === 'admin') throw AppError.forbidden('This endpoint takes tenant credentials');
  return auth;
});

export const Admin = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): Extract<AuthContext, { kind: 'admin' }> => {
    const auth = authOf(ctx);
    if (auth.kind !== 'admin') throw AppError.forbidden();
    return auth;
  },
);

/** The client address, for audit entries. */
export const ClientIp = createParamDecorator((_: unknown, ctx: ExecutionContext): string | null => {
  return ctx.switchToHttp().getRequest<AuthenticatedRequest>().ip ?? null;
});
