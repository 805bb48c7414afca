import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request, Response } from 'express';
import type { DataSource } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import type { AuthenticatedRequest } from '../auth/auth-context.js';
import { AppError } from '../common/errors.js';
import { SessionRateLimit } from './session-rate-limit.service.js';
import { UNMETERED } from './unmetered.js';
import { quotaExceeded, UsageMetering, type MeteredDecision } from './usage-metering.js';

/**
 * S12: runs after authentication on every tenant request. Sets X-RateLimit-* on every response,
 * answers 429 with Retry-After past the limit and audits the first rejection of each window.
 * The decision is the usage metering port's: self-hosted, the tenant's own limit; on the managed
 * deployment (M3) the limit of the tenant's plan, with the request counted against the period's API-call
 * quota in the same Redis round trip.
 * A signed-in user's session (the portal's pages) is held to the user's own limit instead, and is neither
 * counted as an API call nor in the tenant's window: a person reading their documents does not spend
 * the budget their programs run on. API keys and tenant tokens without a session are metered as before.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly metering: UsageMetering,
    private readonly audit: AuditService,
    @InjectDataSource() private readonly ds: DataSource,
    private readonly reflector: Reflector,
    private readonly sessions: SessionRateLimit,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http') return true;
    const req = ctx.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    const auth = req.auth;
    if (!auth || auth.kind === 'admin') return true;
    const tenant = req.tenant;
    if (!tenant) throw AppError.unauthorized();
    const session = auth.kind === 'tenant_jwt' && auth.sessionId !== undefined;
    const decision: MeteredDecision = session
      ? await this.sessions.consume(tenant.id, auth.subject)
      : await this.metering.consumeRequest(
          tenant,
          this.reflector.getAllAndOverride<boolean>(UNMETERED, [ctx.getHandler(), ctx.getClass()]) !== true,
        );
    const res = ctx.switchToHttp().getResponse<Response>();
    res.setHeader('X-RateLimit-Limit', String(decision.limit));
    res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
    res.setHeader('X-RateLimit-Reset', String(decision.resetAt));
    if (decision.quotaRetryAfterSeconds !== undefined) {
      // Limits: the first refusal of the quota in its period is audited.
      if (decision.firstQuotaRefusal) {
        const request = { method: req.method, path: req.path };
        await this.metering.auditRefusal(tenant.id, 'api_calls', { actor: auth.actor, ip: req.ip ?? null }, request);
      }
      throw quotaExceeded('api_calls', decision.quotaRetryAfterSeconds);
    }
    if (decision.allowed) return true;
    if (decision.firstRejection) {
      await this.audit.record(this.ds.manager, {
        tenantId: tenant.id,
        action: 'rate_limit.exceeded',
        actor: auth.actor,
        ipAddress: req.ip ?? null,
        metadata: {
          limit: decision.limit,
          path: req.path,
          method: req.method,
          ...(session ? { scope: 'session' } : {}),
        },
      });
    }
    const error = AppError.of(
      'RATE_LIMITED',
      session
        ? `Too many requests from your signed-in sessions: ${decision.limit} at once, then ${this.sessions.rpm} a minute`
        : `Rate limit of ${decision.limit} requests per minute exceeded`,
    );
    throw new AppError(error.status, error.code, error.message, [], {
      'Retry-After': String(decision.retryAfterSeconds),
    });
  }
}
