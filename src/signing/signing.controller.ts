import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { TenantAuth } from '../auth/auth-context.js';
import { ClientIp, Tenant, TenantEndpoint } from '../auth/decorators.js';
import { UuidPipe } from '../common/uuid.pipe.js';
import { ApiError, IdParam } from '../openapi/decorators.js';

const DocumentId = () => IdParam('id', 'Document', "No such document for this tenant (another tenant's is 404 too)");
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
    description:
      'Queues the signing job and answers 202 with its job id; the status becomes `signed` when the job ' +
      'ends (follow GET /events, subscribe to document.signed, or poll GET /sdf/{id}). If signing gives up, ' +
      'the record shows `signing_error`, document.signing_failed is emitted with the reason, and this call may ' +
      'be repeated.',
  })
  @ApiAcceptedResponse({ type: SignAcceptedDto })
  @DocumentId()
  @ApiError(
    409,
    'INVALID_STATE: the document is not valid (pending, invalid) or already signed, or the tenant has no active key',
    {
      name: 'pending',
      code: 'INVALID_STATE',
      message: 'The document is still pending validation; only a valid document can be signed',
    },
    { name: 'already_signed', code: 'INVALID_STATE', message: 'The document is already signed' },
    {
      name: 'no_key',
      code: 'INVALID_STATE',
      message:
        'The tenant has no active signing key; an operator creates one with POST /admin/tenants/:tenantId/signing-keys',
    },
  )
  sign(
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
    @Param('id', UuidPipe) id: string,
  ): Promise<SignAcceptedDto> {
    return this.signing.requestSign({ auth, ip }, id);
  }

  @Post('verify/:id')
  @HttpCode(200)
  @ApiOperation({
    summary: "Verify the stored file's signature against the tenant's keys, rotated ones included",
    description:
      'Checks signature.sig of the stored file: it must cover every entry as stored and verify with the ' +
      "key it names; `trusted` says whether that key is one of this tenant's. An unsigned file answers " +
      '`valid: false` with a reason, not an error.',
  })
  @ApiOkResponse({
    type: VerifyResultDto,
    description: 'The verification result; an unsigned file is `valid: false` with a reason',
  })
  @DocumentId()
  @ApiError(409, 'INVALID_STATE: the document is pending or invalid', {
    name: 'pending',
    code: 'INVALID_STATE',
    message: 'The document is still pending validation; verification is available once it is valid',
  })
  async verify(
    @Tenant() auth: TenantAuth,
    @ClientIp() ip: string | null,
    @Param('id', UuidPipe) id: string,
  ): Promise<VerifyResultDto> {
    return VerifyResultDto.from(await this.signing.verify({ auth, ip }, id));
  }
}
