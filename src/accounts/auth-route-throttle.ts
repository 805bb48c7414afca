import {
  applyDecorators,
  type CanActivate,
  type ExecutionContext,
  Inject,
  Injectable,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { ApiError, type ErrorCase } from '../openapi/decorators.js';
import { RATE_WINDOW_SCRIPT } from '../rate-limit/rate-limit.service.js';
import { RedisService } from '../redis/redis.module.js';

const ROUTE = 'sdf:auth-route-throttle';

/**
 * Every request to a public /v1/auth route counts against its client address, before its body is looked
 * at: registering, logging in, trying codes, resending mail or accepting invitations by the hundred from
 * one address is refused with 429 and Retry-After, whatever the accounts named. (Per-account counting
 * stays with each flow: failed logins, TOTP tries, one resend a minute.)
 */
@Injectable()
export class AuthRouteThrottleGuard implements CanActivate {
  private readonly hit: (...args: string[]) => Promise<unknown>;

  constructor(
    private readonly reflector: Reflector,
    private readonly redis: RedisService,
    @Inject(AppConfig) private readonly config: AppConfig,
  ) {
    // The tenant rate limit's fixed window on Redis's clock, shared by every API instance.
    this.hit = redis.script('sdfAuthRouteHit', 1, RATE_WINDOW_SCRIPT);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const route = this.reflector.get<string>(ROUTE, context.getHandler());
    const req = context.switchToHttp().getRequest<Request>();
    const env = this.config.env;
    const key = this.redis.key('auth-route', route, req.ip ?? 'unknown');
    const limit = env.AUTH_ROUTE_LIMIT_PER_ADDRESS;
    const [count, resetAt, now] = (await this.hit(
      key,
      String(env.AUTH_ROUTE_WINDOW_SECONDS * 1000),
      String(limit),
    )) as [number, number, number];
    if (count <= limit) return true;
    const msLeft = resetAt - now;
    const error = AppError.of('RATE_LIMITED', 'Too many requests from this address; try again later');
    throw new AppError(error.status, error.code, error.message, [], {
      'Retry-After': String(Math.max(1, Math.ceil(msLeft / 1000))),
    });
  }
}

export const TOO_MANY_FROM_ADDRESS: ErrorCase = {
  name: 'too_many_from_address',
  code: 'RATE_LIMITED',
  message: 'Too many requests from this address; try again later',
};

/** Counts the route per client address (AUTH_ROUTE_LIMIT_PER_ADDRESS a window); documents its 429 with the route's own cases. */
export const ThrottledPerAddress = (route: string, ...more: ErrorCase[]) =>
  applyDecorators(
    SetMetadata(ROUTE, route),
    UseGuards(AuthRouteThrottleGuard),
    ApiError(
      429,
      'Too many requests (Retry-After): from this client address on this route, or for the account',
      TOO_MANY_FROM_ADDRESS,
      ...more,
    ),
  );
