import { applyDecorators, createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiSecurity,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ErrorResponseDto } from '../common/error-response.dto.js';
import { AppError } from '../common/errors.js';
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

/** Tenant routes: an API key or a tenant JWT (SDF-SPEC Authentication). */
export const TenantEndpoint = () =>
  applyDecorators(
    ApiSecurity(SECURITY.apiKey),
    ApiBearerAuth(SECURITY.tenantJwt),
    ApiUnauthorizedResponse({ description: 'Missing or invalid credentials', type: ErrorResponseDto }),
    ApiTooManyRequestsResponse({ description: 'Rate limit exceeded (Retry-After)', type: ErrorResponseDto }),
  );

/**
 * Managed account routes (/v1): a bearer access token of a signed-in user (one with a session), not
 * an API key or a service JWT; those are 403. The authentication step reads the marker.
 */
export const UserEndpoint = () =>
  applyDecorators(
    SetMetadata(IS_USER, true),
    ApiBearerAuth(SECURITY.tenantJwt),
    ApiUnauthorizedResponse({ description: 'Missing, invalid or revoked access token', type: ErrorResponseDto }),
    ApiForbiddenResponse({ description: 'Not a user session, or the role may not do this', type: ErrorResponseDto }),
    ApiTooManyRequestsResponse({ description: 'Rate limit exceeded (Retry-After)', type: ErrorResponseDto }),
  );

/**
 * Admin routes (S6): only an admin JWT passes. The marker, not the path, is what the authentication
 * step enforces; a route under /admin/ without it fails the route-walk test.
 */
export const AdminEndpoint = () =>
  applyDecorators(
    SetMetadata(IS_ADMIN, true),
    ApiBearerAuth(SECURITY.adminJwt),
    ApiUnauthorizedResponse({ description: 'Missing or invalid admin token', type: ErrorResponseDto }),
    ApiForbiddenResponse({ description: 'Tenant credentials on an admin path', type: ErrorResponseDto }),
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
