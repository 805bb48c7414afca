import { applyDecorators, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiSeeOtherResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AdminEndpoint, Public } from '../auth/decorators.js';
import { AppError } from '../common/errors.js';
import { UuidPipe } from '../common/uuid.pipe.js';
import { AppConfig } from '../config/app-config.js';
import { ApiError, ERRORS, IdParam, notFound, type ErrorCase } from '../openapi/decorators.js';
import { SamlLoginDto, SamlMetadataStatusDto } from './dto/saml.dto.js';
import { SamlMetadataService } from './saml-metadata.service.js';
import { SamlService } from './saml.service.js';

const RELAY_STATE_REFUSED: ErrorCase = {
  name: 'relay_state',
  code: 'VALIDATION_ERROR',
  message: 'RelayState is not an allowed return path',
  details: [{ path: '/RelayState', message: 'not in the tenant’s saml_return_paths' }],
};

/** The tenant slug of every /saml route: a tenant without SAML enabled (or an unknown slug) is 404. */
const SamlTenant = () =>
  applyDecorators(
    ApiParam({ name: 'tenantSlug', description: "The tenant's slug", example: 'acme' }),
    ApiError(400, 'A slug holding a NUL character or a lone surrogate', ERRORS.unsafeText),
    ApiError(404, 'No tenant with this slug has SAML enabled', notFound('SAML service provider')),
  );

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
  @ApiOperation({
    summary: 'SP metadata: entity id, ACS URL (HTTP-POST), NameID email format',
    description:
      "The service provider's metadata to give (or link) to the identity provider: the tenant's entity id, " +
      'the ACS URL with the HTTP-POST binding, and the email NameID format. No credentials.',
  })
  @ApiOkResponse({
    description: 'The SP metadata document',
    content: {
      'application/samlmetadata+xml': {
        schema: { type: 'string' },
        example:
          '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://sdf.example.com/saml/acme">…</EntityDescriptor>',
      },
    },
  })
  @SamlTenant()
  async metadata(@Param('tenantSlug') slug: string, @Res() res: Response) {
    const tenant = await this.saml.tenantBySlug(slug);
    res.type('application/samlmetadata+xml').send(this.saml.metadata(tenant));
  }

  @Get(':tenantSlug/login')
  @ApiOperation({
    summary: 'Starts a login: a redirect to the IdP (HTTP-Redirect binding)',
    description:
      "Redirects the browser to the IdP's SSO URL with a fresh AuthnRequest, remembered for 10 minutes. " +
      "`RelayState`, when given, must be a path the tenant's saml_return_paths admit; the ACS then sends the " +
      'browser there with the tokens.',
  })
  @ApiQuery({ name: 'RelayState', required: false, example: '/app/', description: 'Where to return after login' })
  @ApiFoundResponse({ description: "To the IdP's SSO URL (Location)" })
  @ApiError(400, 'RelayState given twice, or not admitted by saml_return_paths', RELAY_STATE_REFUSED, {
    name: 'relay_state_twice',
    code: 'VALIDATION_ERROR',
    message: 'RelayState must be one string',
    details: [{ path: '/RelayState', message: 'one value' }],
  })
  @SamlTenant()
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
    description:
      "Checks the IdP's response (signed assertion, destination, audience, issuer, validity, replay and more; " +
      'each refusal is audited with its reason), finds or creates the user by email and issues tokens. With an ' +
      'admitted RelayState the browser is sent there (303) with the tokens in the URL fragment; without one ' +
      'the tokens are the JSON answer.',
  })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody({
    schema: {
      type: 'object',
      required: ['SAMLResponse'],
      properties: {
        SAMLResponse: { type: 'string', description: 'The base64 samlp:Response (at most 512 KiB)' },
        RelayState: { type: 'string', description: 'The RelayState of the login, if any' },
      },
      example: {
        SAMLResponse: 'PHNhbWxwOlJlc3BvbnNlIHhtbG5zOnNhbWxwPSJ1cm46b2FzaXM6bmFtZXM6dGM6U0FNTDoy…',
        RelayState: '/app/',
      },
    },
  })
  @ApiOkResponse({ type: SamlLoginDto, description: 'Signed in; no RelayState came back' })
  @ApiSeeOtherResponse({ description: 'Signed in: PUBLIC_BASE_URL + the RelayState path, tokens in the fragment' })
  @SamlTenant()
  @ApiError(413, 'The form body is over 1 MB', ERRORS.bodyTooLarge)
  @ApiError(401, 'The response is refused (the reason is audited); no token, no user created', {
    name: 'refused',
    code: 'UNAUTHORIZED',
    message: 'SAML response refused: signature',
  })
  @ApiError(403, 'The email belongs to a user of another tenant', {
    name: 'email_other_tenant',
    code: 'FORBIDDEN',
    message: 'This email address belongs to another organization',
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
  @ApiOperation({
    summary: 'Refetch the IdP metadata; a failure keeps the last good copy',
    description:
      "Reads the tenant's IdP metadata again now (from saml_metadata_url, else the stored XML; a schedule " +
      'does the same) and stores the SSO URL and signing certificates it names. A failure is reported in the ' +
      'answer and kept on the tenant; the last good copy stays.',
  })
  @ApiOkResponse({ type: SamlMetadataStatusDto })
  @IdParam('tenantId', 'Tenant')
  async refresh(@Param('tenantId', UuidPipe) tenantId: string) {
    const status = await this.metadata.refresh(tenantId);
    if (!status) throw AppError.notFound('Tenant');
    return status;
  }
}
