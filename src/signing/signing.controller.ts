import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { TenantAuth } from '../auth/auth-context.js';
import { ClientIp, Tenant, TenantEndpoint } from '../auth/decorators.js';
import { ErrorResponseDto } from '../common/error-response.dto.js';
import { UuidPipe } from '../common/uuid.pipe.js';
import { SignAcceptedDto, VerifyResultDto } from './dto/signing.dto.js';
import { SigningService } from './signing.service.js';

/** SDF-SPEC Signing endpoints; scoped by the authenticated tenant (S5). */
@ApiTags('signing')
@TenantEndpoint()
@Controller()
export class SigningController {
  constructor(private readonly signing: SigningService) {}

  @Post('sign/:id')
  @HttpCode(202)
  @ApiOperation({
    summary: "Sign a valid document with the tenant's active key; the signing job runs in the background",
  })
  @ApiAcceptedResponse({ type: SignAcceptedDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'No such document for this tenant' })
  @ApiConflictResponse({
    type: ErrorResponseDto,
    description:
      'INVALID_STATE: the document is not valid (pending, invalid) or already signed, or the tenant has no active key',
  })
  sign(
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
    @Param('id', UuidPipe) id: string,
  ): Promise<SignAcceptedDto> {
    return this.signing.requestSign({ auth, ip }, id);
  }

  @Post('verify/:id')
  @HttpCode(200)
  @ApiOperation({ summary: "Verify the stored file's signature against the tenant's keys, rotated ones included" })
  @ApiOkResponse({
    type: VerifyResultDto,
    description: 'The F9 result; an unsigned file is `valid: false` with a reason',
  })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'No such document for this tenant' })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'INVALID_STATE: the document is pending or invalid' })
  async verify(
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
    @Param('id', UuidPipe) id: string,
  ): Promise<VerifyResultDto> {
    return VerifyResultDto.from(await this.signing.verify({ auth, ip }, id));
  }
}
