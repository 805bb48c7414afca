import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context.js';
import { Admin, AdminEndpoint, ClientIp } from '../auth/decorators.js';
import { ErrorResponseDto } from '../common/error-response.dto.js';
import { FailedJobListDto, FailedJobsQueryDto, RetriedJobDto } from './dead-letters.dto.js';
import { DeadLettersService } from './dead-letters.service.js';
import { ALL_QUEUES } from './queues.js';

type AdminAuth = Extract<AuthContext, { kind: 'admin' }>;

/** S9: operators inspect and retry dead letters. */
@ApiTags('admin')
@AdminEndpoint()
@Controller('admin/queues')
export class DeadLettersController {
  constructor(private readonly deadLetters: DeadLettersService) {}

  @Get(':queue/failed')
  @ApiOperation({ summary: 'List the failed (dead-letter) jobs of a queue, newest first' })
  @ApiParam({ name: 'queue', enum: ALL_QUEUES })
  @ApiOkResponse({ type: FailedJobListDto })
  @ApiNotFoundResponse({ description: 'Unknown queue', type: ErrorResponseDto })
  list(@Param('queue') queue: string, @Query() query: FailedJobsQueryDto): Promise<FailedJobListDto> {
    return this.deadLetters.listFailed(queue, query.limit ?? 50, query.offset ?? 0);
  }

  @Post(':queue/failed/:jobId/retry')
  @HttpCode(202)
  @ApiOperation({ summary: 'Retry one failed job with a fresh set of attempts' })
  @ApiParam({ name: 'queue', enum: ALL_QUEUES })
  @ApiAcceptedResponse({ type: RetriedJobDto })
  @ApiNotFoundResponse({ description: 'Unknown queue, or no such job in the failed set', type: ErrorResponseDto })
  retry(
    @Param('queue') queue: string,
    @Param('jobId') jobId: string,
    @Admin() auth: AdminAuth,
    @ClientIp() ip: string | null,
  ): Promise<RetriedJobDto> {
    return this.deadLetters.retry(queue, jobId, { actor: auth.actor, ip });
  }
}
