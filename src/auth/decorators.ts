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
export const SKIP_RATE_LIMIT = 'sdf:skip-rate-limit';

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

/** Admin routes (S6): the guard requires an admin JWT on every path under /admin/. */
export const AdminEndpoint = () =>
  applyDecorators(
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
