import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request, Response } from 'express';
import type { DataSource } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import type { AuthenticatedRequest } from '../auth/auth-context.js';
import { AppError } from '../common/errors.js';
import { RateLimitService } from './rate-limit.service.js';
import { TenantLimitResolver } from './tenant-limit.resolver.js';

/**
 * S12: runs after authentication on every tenant request. Sets X-RateLimit-* on every response,
 * answers 429 with Retry-After past the limit and audits the first rejection of each window.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly limiter: RateLimitService,
    private readonly limits: TenantLimitResolver,
    private readonly audit: AuditService,
    @InjectDataSource() private readonly ds: DataSource,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http') return true;
    const req = ctx.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    const auth = req.auth;
    if (!auth || auth.kind === 'admin') return true;
    const tenant = req.tenant;
    if (!tenant) throw AppError.unauthorized();
    const decision = await this.limiter.consume(tenant.id, await this.limits.rpmFor(tenant));
    const res = ctx.switchToHttp().getResponse<Response>();
    res.setHeader('X-RateLimit-Limit', String(decision.limit));
    res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
    res.setHeader('X-RateLimit-Reset', String(decision.resetAt));
    if (decision.allowed) return true;
    if (decision.firstRejection) {
      await this.audit.record(this.ds.manager, {
        tenantId: tenant.id,
        action: 'rate_limit.exceeded',
        actor: auth.actor,
        ipAddress: req.ip ?? null,
        metadata: { limit: decision.limit, path: req.path, method: req.method },
      });
    }
    const error = AppError.of('RATE_LIMITED', `Rate limit of ${decision.limit} requests per minute exceeded`);
    throw new AppError(error.status, error.code, error.message, [], {
      'Retry-After': String(decision.retryAfterSeconds),
    });
  }
}
