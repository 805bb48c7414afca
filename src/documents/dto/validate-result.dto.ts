import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ErrorPayloadDto } from '../../common/error-response.dto.js';
import { ChecksDto, SignatureResultDto, WARNINGS_DESCRIPTION } from './document.dto.js';

/** POST /validate 200 (SDF-SPEC, F10). */
export class ValidateOkDto {
  @ApiProperty({ enum: [true], example: true }) valid: boolean;
  @ApiProperty({ example: '0.1' }) sdf_version: string;
  @ApiProperty({ example: 'invoice' }) document_type: string;
  @ApiProperty({ example: false }) is_signed: boolean;
  @ApiProperty({ type: ChecksDto }) checks: ChecksDto;
  @ApiProperty({
    type: [String],
    description: WARNINGS_DESCRIPTION,
    example: ['PDF_EMBEDDED_FILE: visual.pdf embeds the file "factur-x.xml" (5321 bytes)'],
  })
  warnings: string[];
  @ApiPropertyOptional({ type: SignatureResultDto }) signature?: SignatureResultDto;
  @ApiProperty({ type: Boolean, nullable: true, example: null }) registry_match: boolean | null;
}

/** POST /validate 422 (S5: the error body plus `valid: false`; F10 checks beside it). */
export class ValidateFailedDto {
  @ApiProperty({ enum: [false], example: false }) valid: boolean;
  @ApiProperty({ type: ErrorPayloadDto }) error: ErrorPayloadDto;
  @ApiProperty({ type: ChecksDto }) checks: ChecksDto;
}
