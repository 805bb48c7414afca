import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class ErrorDetailDto {
  @ApiProperty({ example: '/invoice_number', description: 'JSON pointer to the offending value' })
  path: string;

  @ApiProperty({ example: 'must be string' })
  message: string;
}

export class ErrorPayloadDto {
  @ApiProperty({ example: 'VALIDATION_ERROR' })
  code: string;

  @ApiProperty({ example: 'Request validation failed' })
  message: string;

  @ApiPropertyOptional({ example: 'data.json', description: 'SDF format failures: the archive entry concerned' })
  file?: string;

  @ApiProperty({ type: [ErrorDetailDto] })
  details: ErrorDetailDto[];
}

/** S5: the body of every error response. */
export class ErrorResponseDto {
  @ApiProperty({ type: ErrorPayloadDto })
  error: ErrorPayloadDto;
}
