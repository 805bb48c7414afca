import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ErrorPayloadDto } from '../../common/error-response.dto.js';
import { ChecksDto, DocumentSummaryDto, SignatureResultDto, WARNINGS_DESCRIPTION } from './document.dto.js';

/** The summary the service would store for the file, in the list items' shape. */
const VALIDATE_SUMMARY = {
  type: DocumentSummaryDto,
  nullable: true,
  description:
    "What the document is known by, as the list shows it once stored (the tenant's mapping for a registered " +
    'schema applies); null when meta.json or data.json cannot be read',
} as const;

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
  @ApiProperty(VALIDATE_SUMMARY) summary: DocumentSummaryDto | null;
}

/** POST /validate 422 (S5: the error body plus `valid: false`; F10 checks beside it). */
export class ValidateFailedDto {
  @ApiProperty({ enum: [false], example: false }) valid: boolean;
  @ApiProperty({ type: ErrorPayloadDto }) error: ErrorPayloadDto;
  @ApiProperty({ type: ChecksDto }) checks: ChecksDto;
  @ApiProperty(VALIDATE_SUMMARY) summary: DocumentSummaryDto | null;
}
