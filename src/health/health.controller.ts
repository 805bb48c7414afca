import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import type { DataSource } from 'typeorm';
import { Public } from '../auth/decorators.js';
import { AppConfig } from '../config/app-config.js';
import { RedisService } from '../redis/redis.module.js';
import { ReadinessChecks } from '../common/readiness.js';

class HealthDto {
  @ApiProperty({ example: 'ok' }) status: string;
  @ApiProperty({ example: '0.1.0' }) version: string;
  @ApiProperty({
    enum: ['self-hosted', 'managed'],
    example: 'self-hosted',
    description:
      'Which deployment this is: managed adds the /v1 accounts API (the web front end offers account sign-in)',
  })
  deployment_mode: 'self-hosted' | 'managed';
}

class ReadinessDto {
  @ApiProperty({ enum: ['ok', 'unavailable'], example: 'ok' }) status: string;
  @ApiProperty({ example: { database: 'ok', redis: 'ok', storage: 'ok' } })
  checks: Record<string, string>;
  @ApiProperty({
    required: false,
    example: { storage: 'free space 52428800 bytes is below STORAGE_MIN_FREE_BYTES (268435456)' },
    description:
      'Why a check is unavailable, for the checks that say: the storage disk full or read-only, or its free space below STORAGE_MIN_FREE_BYTES',
  })
  reasons?: Record<string, string>;
  @ApiProperty({
    description:
      'Background work in progress, for operators; never decides the status. `summary_backfill`: documents ' +
      'stored before summaries existed that are left to summarize (`remaining`), and `state` running or done',
    example: { summary_backfill: { state: 'running', remaining: 1200 } },
  })
  details: Record<string, unknown>;
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
  ) {
    readiness.register('database', () => this.ds.query('SELECT 1'));
    readiness.register('redis', () => this.redis.client.ping());
  }

  @Get()
  @ApiOperation({
    summary: 'Liveness and service version',
    description: 'No credentials. Answers 200 while the process serves requests; it checks no dependency.',
  })
  @ApiOkResponse({ type: HealthDto })
  health(): HealthDto {
    return { status: 'ok', version: this.config.version, deployment_mode: this.config.env.DEPLOYMENT_MODE };
  }

  @Get('ready')
  @ApiOperation({
    summary: 'Readiness: database, Redis and storage reachable',
    description:
      'No credentials. 200 when the database, Redis and storage answer, 503 with the failing check otherwise ' +
      '(and, where it says, why: the storage disk full, read-only, or its free space below STORAGE_MIN_FREE_BYTES); ' +
      'anonymous callers share one result cached for READINESS_CACHE_MS.',
  })
  @ApiOkResponse({ type: ReadinessDto })
  @ApiServiceUnavailableResponse({ type: ReadinessDto })
  async ready(@Res({ passthrough: true }) res: Response): Promise<ReadinessDto> {
    // Anonymous callers share one cached result (READINESS_CACHE_MS), a 503 as briefly as a 200.
    const readiness = await this.readiness.status();
    if (readiness.status !== 'ok') res.status(503);
    const reasons = Object.keys(readiness.reasons).length > 0 ? { reasons: { ...readiness.reasons } } : {};
    return {
      status: readiness.status,
      checks: { ...readiness.checks },
      ...reasons,
      details: { ...readiness.details },
    };
  }
}
