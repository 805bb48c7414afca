import { ApiProperty } from '@nestjs/swagger';
import { EX } from '../../openapi/examples.js';
import type { VerifyResult } from '../../sdf/index.js';
import { SIGNING_ALGORITHMS } from './signing-key.dto.js';

/** 202 of POST /sign/:id. */
export class SignAcceptedDto {
  @ApiProperty({ format: 'uuid', description: 'The record id', example: EX.documentId }) id: string;
  @ApiProperty({
    enum: ['valid'],
    description: 'The status now; it becomes `signed` when the job finishes',
    example: 'valid',
  })
  status: string;
  @ApiProperty({
    example: `sign-sdf:${EX.documentId}`,
    description: 'The public job id, `{queue-name}:{queue-job-id}`',
  })
  job_id: string;
}

/** 200 of POST /verify/:id (F9 result). */
export class VerifyResultDto {
  @ApiProperty({ description: 'The signature covers every entry as stored and verifies', example: true })
  valid: boolean;
  @ApiProperty({ enum: SIGNING_ALGORITHMS, nullable: true, type: String, example: 'ECDSA-P256' }) algorithm:
    string | null;
  @ApiProperty({ nullable: true, type: String, description: 'The kid the signature names', example: EX.keyThumbprint })
  key_id: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', example: '2026-03-15T13:30:00.000Z' })
  signed_at: string | null;
  @ApiProperty({ description: "The key is one of this tenant's (active or rotated)", example: true })
  trusted: boolean;
  @ApiProperty({ required: false, example: 'the archive is not signed', description: 'Why it is not valid' })
  reason?: string;

  static from(result: VerifyResult): VerifyResultDto {
    const dto: VerifyResultDto = {
      valid: result.valid,
      algorithm: result.algorithm,
      key_id: result.key_id,
      signed_at: result.signed_at,
      trusted: result.trusted,
    };
    if (!result.valid && result.reason !== undefined) dto.reason = result.reason;
    return dto;
  }
}
