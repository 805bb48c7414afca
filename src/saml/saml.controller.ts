import { Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AdminEndpoint, Public } from '../auth/decorators.js';
import { AppError } from '../common/errors.js';
import { UuidPipe } from '../common/uuid.pipe.js';
import { AppConfig } from '../config/app-config.js';
import { SamlMetadataService } from './saml-metadata.service.js';
import { SamlService } from './saml.service.js';

/**
 * C1: the service provider side of per-tenant SAML. All three routes are public (the IdP and the
 * browser carry no credentials of ours); a tenant without SAML enabled is 404 on each.
 */
@ApiTags('saml')
@Public()
@Controller('saml')
export class SamlController {
  constructor(
    private readonly saml: SamlService,
    @Inject(AppConfig) private readonly config: AppConfig,
  ) {}

  @Get(':tenantSlug/metadata')
  @ApiOperation({ summary: 'SP metadata: entity id, ACS URL (HTTP-POST), NameID email format' })
  async metadata(@Param('tenantSlug') slug: string, @Res() res: Response) {
    const tenant = await this.saml.tenantBySlug(slug);
    res.type('application/samlmetadata+xml').send(this.saml.metadata(tenant));
  }

  @Get(':tenantSlug/login')
  @ApiOperation({ summary: 'Starts a login: a redirect to the IdP (HTTP-Redirect binding)' })
  async login(@Param('tenantSlug') slug: string, @Query('RelayState') relayState: unknown, @Res() res: Response) {
    const tenant = await this.saml.tenantBySlug(slug);
    if (relayState !== undefined && typeof relayState !== 'string') {
      throw AppError.badRequest('RelayState must be one string', [{ path: '/RelayState', message: 'one value' }]);
    }
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, await this.saml.loginUrl(tenant, relayState));
  }

  @Post(':tenantSlug/acs')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Assertion consumer (HTTP-POST): tokens as a redirect with a URL fragment, or JSON without RelayState',
  })
  async acs(@Param('tenantSlug') slug: string, @Req() req: Request, @Res() res: Response) {
    const tenant = await this.saml.tenantBySlug(slug);
    const body = (req.body ?? {}) as { SAMLResponse?: unknown; RelayState?: unknown };
    const out = await this.saml.acs(tenant, body, {
      ip: req.ip ?? null,
      userAgent: req.get('user-agent') ?? null,
    });
    res.setHeader('Cache-Control', 'no-store');
    if (out.returnPath) {
      // The fragment never reaches a server's logs or a Referer header.
      const fragment = new URLSearchParams(
        Object.entries(out.tokens).map(([k, v]) => [k, String(v)] as [string, string]),
      ).toString();
      const base = (this.config.env.PUBLIC_BASE_URL ?? '').replace(/\/+$/, '');
      res.redirect(303, `${base}${out.returnPath}#${fragment}`);
      return;
    }
    res.status(200).json({ ...out.tokens, user: out.user });
  }
}

/** C1: the operator's refresh of a tenant's IdP metadata (the schedule does the same). */
@ApiTags('admin')
@AdminEndpoint()
@Controller('admin')
export class AdminSamlController {
  constructor(private readonly metadata: SamlMetadataService) {}

  @Post('tenants/:tenantId/saml/refresh')
  @HttpCode(200)
  @ApiOperation({ summary: 'Refetch the IdP metadata; a failure keeps the last good copy' })
  @ApiOkResponse({ description: 'refreshed, error, refreshed_at, sso_url, certificates' })
  async refresh(@Param('tenantId', UuidPipe) tenantId: string) {
    const status = await this.metadata.refresh(tenantId);
    if (!status) throw AppError.notFound('Tenant');
    return status;
  }
}
