import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AppConfig } from '../config/app-config.js';
import { AppError } from '../common/errors.js';
import { requestContext } from '../common/request-context.js';
import { TenantsRepository } from '../tenants/tenants.repository.js';
import { ApiKeysService } from './api-keys.service.js';
import type { AuthContext, AuthenticatedRequest } from './auth-context.js';
import { IS_PUBLIC } from './decorators.js';
import { verifyAdminToken, verifyTenantToken } from './tokens.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : '';
}

export function isAdminPath(path: string): boolean {
  return path === '/admin' || path.startsWith('/admin/');
}

/**
 * The one authentication step (SDF-SPEC Authentication, S6). X-API-Key first, else a bearer JWT;
 * both present: the API key decides. Under /admin/ only an admin JWT passes: none or a bad one is
 * 401, valid tenant credentials are 403. The resolved context is the only source of the tenant.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(AppConfig) private readonly config: AppConfig,
    private readonly apiKeys: ApiKeysService,
    private readonly tenants: TenantsRepository,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http') return true;
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [ctx.getHandler(), ctx.getClass()])) return true;
    const req = ctx.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    req.auth = isAdminPath(req.path) ? await this.authenticateAdmin(req) : await this.authenticateTenant(req);
    if (req.tenant) requestContext.setTenant(req.tenant.id);
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
    const claims = token ? verifyTenantToken(token, this.config.secrets.jwtSecret) : 'invalid';
    if (claims === 'expired') throw AppError.unauthorized('Token expired');
    if (claims === 'invalid') throw AppError.unauthorized('Invalid token');
    const tenant = UUID.test(claims.tenant_id) ? await this.tenants.findById(claims.tenant_id) : null;
    if (!tenant) throw AppError.unauthorized('Invalid token');
    req.tenant = tenant;
    return { kind: 'tenant_jwt', tenantId: tenant.id, actor: claims.sub, subject: claims.sub };
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
    if (typeof verifyTenantToken(token, this.config.secrets.jwtSecret) === 'object') {
      throw AppError.forbidden('Admin endpoints require an admin token');
    }
    throw AppError.unauthorized(admin === 'expired' ? 'Token expired' : 'Invalid token');
  }
}
