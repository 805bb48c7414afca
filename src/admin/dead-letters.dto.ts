import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { EX } from '../openapi/examples.js';

export class FailedJobsQueryDto {
  @ApiProperty({ required: false, default: 50, minimum: 1, maximum: 200 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;

  @ApiProperty({ required: false, default: 0, minimum: 0 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  offset?: number;
}

const DELIVERY_JOB_ID = `${EX.eventId}_${EX.webhookId}`;

export class FailedJobDto {
  @ApiProperty({ description: 'Queue job id (use it in the retry path)', example: DELIVERY_JOB_ID }) id: string;
  @ApiProperty({
    example: `webhook-delivery:${DELIVERY_JOB_ID}`,
    description: 'The public job id, `{queue-name}:{queue-job-id}`',
  })
  job_id: string;
  @ApiProperty({ example: 'document.validated' }) name: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'Scalar fields of the job data (ids, event); bodies and long values left out',
    example: {
      tenant_id: EX.tenantId,
      webhook_id: EX.webhookId,
      event_id: EX.eventId,
      event: 'document.validated',
      document_id: EX.metaDocumentId,
    },
  })
  data: Record<string, string | number | boolean | null>;
  @ApiProperty({ type: 'string', nullable: true, example: 'HTTP 503' }) failed_reason: string | null;
  @ApiProperty({ type: 'integer', example: 4 }) attempts_made: number;
  @ApiProperty({ format: 'date-time', example: EX.createdAt }) created_at: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EX.updatedAt }) processed_at:
    string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EX.updatedAt }) failed_at: string | null;
}

export class FailedJobListDto {
  @ApiProperty({ example: 'webhook-delivery' }) queue: string;
  @ApiProperty({ type: 'integer', description: 'Jobs in the failed set in all', example: 1 }) total: number;
  @ApiProperty({ type: [FailedJobDto] }) jobs: FailedJobDto[];
}

export class RetriedJobDto {
  @ApiProperty({ example: DELIVERY_JOB_ID }) id: string;
  @ApiProperty({ example: `webhook-delivery:${DELIVERY_JOB_ID}` }) job_id: string;
  @ApiProperty({ enum: ['waiting'], example: 'waiting' }) state: 'waiting';
}
