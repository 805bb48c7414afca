import { timingSafeEqual } from 'node:crypto';
import { Controller, Get, Headers, Inject, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/decorators.js';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { MetricsService } from './metrics.service.js';

/** Constant-time comparison of a presented bearer token with the configured one. */
export function metricsTokenMatches(header: string | undefined, token: string): boolean {
  const presented = Buffer.from(/^Bearer (.+)$/.exec(header ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/**
 * GET /metrics on the API port, for Prometheus. Public to the tenant/admin authentication step (a
 * scraper holds neither credential) and guarded here by METRICS_TOKEN instead; without a token, or
 * when metrics have their own port (METRICS_PORT), the route does not exist (404).
 */
@ApiExcludeController()
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(
    @Inject(AppConfig) private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  @Get()
  async scrape(@Headers('authorization') authorization: string | undefined, @Res() res: Response): Promise<void> {
    const token = this.config.env.METRICS_TOKEN;
    if (!token || this.config.env.METRICS_PORT !== undefined) throw AppError.notFound('Route');
    if (!metricsTokenMatches(authorization, token)) throw AppError.unauthorized('Missing or invalid metrics token');
    res.setHeader('Content-Type', this.metrics.registry.contentType);
    res.send(await this.metrics.registry.metrics());
  }
}
