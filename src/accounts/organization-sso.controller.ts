import { Body, Controller, Get, Inject, Put } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminService } from '../admin/admin.service.js';
import { UserEndpoint } from '../auth/decorators.js';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { ApiError, ERRORS, JsonBodyErrors } from '../openapi/decorators.js';
import { Tenant } from '../tenants/entities/tenant.entity.js';
import { AccountService, type Caller } from './account.service.js';
import { CurrentUser } from './caller.decorator.js';
import { SsoSettingsDto, UpdateSsoSettingsDto } from './dto/sso.dto.js';

/** Where the portal's "sign in with SSO" returns; a self-service configuration always admits it. */
const PORTAL_RETURN_PATH = '/app/';

/** The operator's field names in errors from the shared checks, as this endpoint's fields. */
const FIELD_OF: Record<string, string> = {
  '/saml_enabled': '/enabled',
  '/saml_metadata_url': '/metadata_url',
  '/saml_metadata_xml': '/metadata_xml',
  '/saml_idp_initiated': '/idp_initiated',
};

const OWNER_ONLY = {
  name: 'not_owner',
  code: 'FORBIDDEN',
  message: 'Only the owner may configure single sign-on',
} as const;

/**
 * Self-service single sign-on for the organization's owner: the same settings and the same checks as the
 * operator's PATCH /admin/tenants/{id} (metadata fetched through the same guarded resolver, parsed and
 * checked before anything is stored), limited to the organization of the caller.
 */
@ApiTags('v1 account')
@UserEndpoint()
@Controller('v1/account/sso')
export class OrganizationSsoController {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(AppConfig) private readonly config: AppConfig,
    private readonly account: AccountService,
    private readonly admin: AdminService,
  ) {}

  @Get()
  @ApiOperation({
    summary: "The organization's single sign-on settings, and what to give the identity provider (owner only)",
    description:
      'Whether SSO is on, where the IdP metadata comes from and what was read from it, and our side for the ' +
      'IdP: entity id, SP metadata URL and assertion consumer URL.',
  })
  @ApiOkResponse({ type: SsoSettingsDto })
  @ApiError(403, "Not the owner, or not a signed-in user's token", OWNER_ONLY, ERRORS.notUserSession)
  async get(@CurrentUser() c: Caller): Promise<SsoSettingsDto> {
    await this.owner(c);
    return this.settings(await this.ds.manager.findOneByOrFail(Tenant, { id: c.tenantId }));
  }

  @Put()
  @ApiOperation({
    summary: 'Configure single sign-on: the IdP metadata (URL or XML), IdP-initiated sign-in, on or off (owner only)',
    description:
      'Fields not given stay as they are. New metadata is fetched (private and loopback addresses refused) and ' +
      'parsed before anything is stored; metadata that does not load answers 400 and changes nothing. Turning ' +
      'SSO on needs metadata. Our entity id is set from the public address when none is set yet, and the ' +
      "portal's return path /app/ is admitted. Audited as tenant.update.",
  })
  @ApiOkResponse({ type: SsoSettingsDto })
  @JsonBodyErrors('Unusable metadata, or SSO turned on without metadata', {
    name: 'bad_metadata',
    code: 'VALIDATION_ERROR',
    message: 'SAML metadata not usable: no IDPSSODescriptor',
    details: [{ path: '/metadata_url', message: 'no IDPSSODescriptor' }],
  })
  @ApiError(403, "Not the owner, or not a signed-in user's token", OWNER_ONLY, ERRORS.notUserSession)
  async put(@CurrentUser() c: Caller, @Body() body: UpdateSsoSettingsDto): Promise<SsoSettingsDto> {
    await this.owner(c);
    const tenant = await this.ds.manager.findOneByOrFail(Tenant, { id: c.tenantId });
    const url = body.metadata_url !== undefined ? body.metadata_url : tenant.saml_metadata_url;
    const xml = body.metadata_xml !== undefined ? body.metadata_xml : tenant.saml_metadata_xml;
    if ((body.enabled ?? tenant.saml_enabled) && !url && !xml) {
      throw AppError.badRequest("Single sign-on needs the identity provider's metadata (its URL or the XML) first", [
        { path: '/enabled', message: 'metadata_url or metadata_xml is required' },
      ]);
    }
    const returnPaths = tenant.saml_return_paths.includes(PORTAL_RETURN_PATH)
      ? undefined
      : [...tenant.saml_return_paths, PORTAL_RETURN_PATH];
    try {
      await this.admin.updateTenant(
        c.tenantId,
        {
          saml_enabled: body.enabled,
          saml_metadata_url: body.metadata_url,
          saml_metadata_xml: body.metadata_xml,
          saml_idp_initiated: body.idp_initiated,
          saml_entity_id: tenant.saml_entity_id ? undefined : this.spEntityId(tenant),
          saml_return_paths: returnPaths,
        },
        { actor: `user:${c.userId}`, ip: c.client.ip },
      );
    } catch (err) {
      if (err instanceof AppError) {
        const details = err.details.map((d) => ({ ...d, path: FIELD_OF[d.path] ?? d.path }));
        let message = err.message;
        for (const [from, to] of Object.entries(FIELD_OF)) message = message.replaceAll(from.slice(1), to.slice(1));
        throw new AppError(err.status, err.code, message, details);
      }
      throw err;
    }
    return this.settings(await this.ds.manager.findOneByOrFail(Tenant, { id: c.tenantId }));
  }

  private async owner(c: Caller): Promise<void> {
    const me = await this.account.caller(c);
    if (me.role !== 'owner') throw AppError.forbidden(OWNER_ONLY.message);
  }

  private base(): string {
    return (this.config.env.PUBLIC_BASE_URL ?? `http://localhost:${this.config.env.PORT}`).replace(/\/+$/, '');
  }

  private spEntityId(t: Tenant): string {
    return `${this.base()}/saml/${t.slug}`;
  }

  private settings(t: Tenant): SsoSettingsDto {
    const sp = `${this.base()}/saml/${t.slug}`;
    return {
      enabled: t.saml_enabled,
      metadata_url: t.saml_metadata_url,
      metadata_xml_set: t.saml_metadata_xml !== null,
      idp_initiated: t.saml_idp_initiated,
      sp_entity_id: t.saml_entity_id ?? sp,
      sp_metadata_url: `${sp}/metadata`,
      acs_url: `${sp}/acs`,
      login_url: `${sp}/login?RelayState=${encodeURIComponent(PORTAL_RETURN_PATH)}`,
      idp_entity_id: t.saml_idp_entity_id,
      idp_sso_url: t.saml_idp_sso_url,
      idp_certificates: t.saml_idp_certificates.length,
      metadata_refreshed_at: t.saml_metadata_refreshed_at?.toISOString() ?? null,
      metadata_error: t.saml_metadata_error,
    };
  }
}
