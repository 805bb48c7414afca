import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { TenantDto } from '../admin/dto/tenant.dto.js';
import type { TenantAuth } from '../auth/auth-context.js';
import { Tenant, TenantEndpoint } from '../auth/decorators.js';
import { AppError } from '../common/errors.js';
import { TenantsRepository } from './tenants.repository.js';

class CredentialDto {
  @ApiProperty({ enum: ['api_key', 'tenant_jwt'], example: 'api_key' }) kind: string;
  @ApiProperty({ example: 'api_key:sdf_kAbC', description: 'The actor recorded in audit entries' }) actor: string;
}

class WhoAmIDto {
  @ApiProperty({ type: TenantDto }) tenant: TenantDto;
  @ApiProperty({ type: CredentialDto }) credential: CredentialDto;
}

/** Lets an integrator check a credential: which tenant it resolves to and how it is audited. */
@ApiTags('tenant')
@TenantEndpoint()
@Controller('tenant')
export class TenantController {
  constructor(private readonly tenants: TenantsRepository) {}

  @Get()
  @ApiOperation({
    summary: 'The tenant and credential this request authenticated as',
    description:
      'Lets an integrator check a credential: the tenant it resolves to, its kind (API key or tenant JWT) ' +
      'and the actor its requests are audited as.',
  })
  @ApiOkResponse({ type: WhoAmIDto })
  async whoami(@Tenant() auth: TenantAuth): Promise<WhoAmIDto> {
    const tenant = await this.tenants.findById(auth.tenantId);
    if (!tenant) throw AppError.notFound('Tenant');
    return { tenant: TenantDto.from(tenant), credential: { kind: auth.kind, actor: auth.actor } };
  }
}
