import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context.js';
import { Admin, AdminEndpoint, ClientIp } from '../auth/decorators.js';
import { ApiError, ERRORS, notFound } from '../openapi/decorators.js';
import { FailedJobListDto, FailedJobsQueryDto, RetriedJobDto } from './dead-letters.dto.js';
import { DeadLettersService } from './dead-letters.service.js';
import { ALL_QUEUES } from '../queue/queues.js';

type AdminAuth = Extract<AuthContext, { kind: 'admin' }>;

/** S9: operators inspect and retry dead letters. */
@ApiTags('admin')
@AdminEndpoint()
@Controller('admin/queues')
export class DeadLettersController {
  constructor(private readonly deadLetters: DeadLettersService) {}

  @Get(':queue/failed')
  @ApiOperation({
    summary: 'List the failed (dead-letter) jobs of a queue, newest first',
    description:
      'Jobs that used up their attempts, with the reason of the last failure and the scalar fields of their ' +
      'data (bodies and long values left out). `limit` 1 to 200 (default 50) and `offset` page through them.',
  })
  @ApiParam({ name: 'queue', enum: ALL_QUEUES, description: 'The queue name' })
  @ApiOkResponse({ type: FailedJobListDto })
  @ApiError(400, 'limit or offset out of range', {
    name: 'invalid_query',
    code: 'VALIDATION_ERROR',
    message: 'Request validation failed',
    details: [{ path: '/limit', message: 'limit must not be greater than 200' }],
  })
  @ApiError(404, 'Unknown queue', notFound('Queue'))
  list(@Param('queue') queue: string, @Query() query: FailedJobsQueryDto): Promise<FailedJobListDto> {
    return this.deadLetters.listFailed(queue, query.limit ?? 50, query.offset ?? 0);
  }

  @Post(':queue/failed/:jobId/retry')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Retry one failed job with a fresh set of attempts',
    description: 'Moves the job from the failed set back to waiting, with its attempt count reset. Audited.',
  })
  @ApiParam({ name: 'queue', enum: ALL_QUEUES, description: 'The queue name' })
  @ApiParam({
    name: 'jobId',
    description:
      'The `id` of a failed job as listed; not a uuid in general: the document id (validate-sdf, sign-sdf), ' +
      'the push id (erp-push), `<event id>_<webhook id>` (webhook-delivery) or a number (email)',
    example: '0b5c4c9e-4a8d-4a2e-9a39-1d8e9c6f0d11',
  })
  @ApiAcceptedResponse({ type: RetriedJobDto })
  @ApiError(400, 'A path parameter holding a NUL character or a lone surrogate', {
    ...ERRORS.unsafeText,
    details: [{ path: '/jobId', message: 'must not hold a NUL character or a lone UTF-16 surrogate' }],
  })
  @ApiError(404, 'Unknown queue, or no such job in the failed set', notFound('Queue'), notFound('Failed job'))
  retry(
    @Param('queue') queue: string,
    @Param('jobId') jobId: string,
    @Admin() auth: AdminAuth,
    @ClientIp() ip: string | null,
  ): Promise<RetriedJobDto> {
    return this.deadLetters.retry(queue, jobId, { actor: auth.actor, ip });
  }
}
