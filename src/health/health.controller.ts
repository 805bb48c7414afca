import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import type { DataSource } from 'typeorm';
import { Public } from '../auth/decorators.js';
import { AppConfig } from '../config/app-config.js';
import { RedisService } from '../redis/redis.module.js';
import { ReadinessChecks } from './readiness.js';

class HealthDto {
  @ApiProperty({ example: 'ok' }) status: string;
  @ApiProperty({ example: '0.1.0' }) version: string;
}

class ReadinessDto {
  @ApiProperty({ enum: ['ok', 'unavailable'] }) status: string;
  @ApiProperty({ example: { database: 'ok', redis: 'ok', storage: 'ok' } })
  checks: Record<string, string>;
}

const TIMEOUT_MS = 2000;

function withTimeout<T>(p: Promise<T>): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), TIMEOUT_MS))]);
}

/** S15: liveness without credentials; readiness checks database, Redis and storage. */
@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    @Inject(AppConfig) private readonly config: AppConfig,
    @InjectDataSource() private readonly ds: DataSource,
    private readonly redis: RedisService,
    private readonly readiness: ReadinessChecks,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Liveness and service version' })
  @ApiOkResponse({ type: HealthDto })
  health(): HealthDto {
    return { status: 'ok', version: this.config.version };
  }

  @Get('ready')
  @ApiOperation({ summary: 'Readiness: database, Redis and storage reachable' })
  @ApiOkResponse({ type: ReadinessDto })
  @ApiServiceUnavailableResponse({ type: ReadinessDto })
  async ready(@Res({ passthrough: true }) res: Response): Promise<ReadinessDto> {
    const probes: Record<string, () => Promise<unknown>> = {
      database: () => this.ds.query('SELECT 1'),
      redis: () => this.redis.client.ping(),
      ...this.readiness.extra(),
    };
    const checks: Record<string, string> = {};
    await Promise.all(
      Object.entries(probes).map(async ([name, probe]) => {
        checks[name] = await withTimeout(probe()).then(
          () => 'ok',
          () => 'unavailable',
        );
      }),
    );
    const ok = Object.values(checks).every((c) => c === 'ok');
    if (!ok) res.status(503);
    return { status: ok ? 'ok' : 'unavailable', checks };
  }
}
