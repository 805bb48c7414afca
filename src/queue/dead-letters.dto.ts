import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

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

export class FailedJobDto {
  @ApiProperty({ description: 'Queue job id (use it in the retry path)' }) id: string;
  @ApiProperty({ example: 'webhook-delivery:0b6c..._9a1f...', description: 'S9 public job id' }) job_id: string;
  @ApiProperty() name: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'Scalar fields of the job data (ids, event); bodies and long values left out',
  })
  data: Record<string, string | number | boolean | null>;
  @ApiProperty({ type: 'string', nullable: true }) failed_reason: string | null;
  @ApiProperty() attempts_made: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) processed_at: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) failed_at: string | null;
}

export class FailedJobListDto {
  @ApiProperty() queue: string;
  @ApiProperty({ description: 'Jobs in the failed set in all' }) total: number;
  @ApiProperty({ type: [FailedJobDto] }) jobs: FailedJobDto[];
}

export class RetriedJobDto {
  @ApiProperty() id: string;
  @ApiProperty() job_id: string;
  @ApiProperty({ enum: ['waiting'] }) state: 'waiting';
}
