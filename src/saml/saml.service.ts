import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { SAML, ValidateInResponseTo, type Profile, type SamlConfig } from '@node-saml/node-saml';
import { DOMParser } from '@xmldom/xmldom';
import { QueryFailedError, type DataSource, type EntityManager } from 'typeorm';
import { User } from '../accounts/entities/user.entity.js';
import { SessionsService } from '../accounts/sessions.service.js';
import { AuditService } from '../audit/audit.service.js';
import { signTenantToken } from '../auth/tokens.js';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { RedisService } from '../redis/redis.module.js';
import { Tenant } from '../tenants/entities/tenant.entity.js';
import { hasDoctype } from './idp-metadata.js';
import { RedisRequestCache } from './redis-request-cache.js';
import { allowedReturnPath } from './return-path.js';

/** C1: at most two minutes between the IdP's clock and ours. */
export const SAML_SKEW_MS = 2 * 60_000;
/** How long a login started here may take at the IdP. */
const REQUEST_TTL_MS = 10 * 60_000;
/** Self-hosted: the tenant JWT a SAML login yields lives 8 hours (SDF-SPEC Authentication). */
const SELF_HOSTED_TTL_SECONDS = 8 * 60 * 60;
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const EMAIL = /^[^\s@<>()]{1,64}@[^\s@<>()]{1,255}$/;
const MAX_RESPONSE_BYTES = 512 * 1024;

export type RefusalReason =
  | 'malformed'
  | 'doctype'
  | 'signature'
  | 'signature_wrapping'
  | 'in_response_to'
  | 'idp_initiated'
  | 'expired'
  | 'not_yet_valid'
  | 'audience'
  | 'destination'
  | 'recipient'
  | 'issuer'
  | 'replay'
  | 'no_email'
  | 'email_other_tenant'
  | 'relay_state'
  | 'idp_status';

export class SamlRefusal extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
  }
}

export interface SamlTokens {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
}

export interface AcsOutcome {
  tokens: SamlTokens;
  user: { id: string; email: string; created: boolean };
  returnPath: string | null;
}

@Injectable()
export class SamlService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(AppConfig) private readonly config: AppConfig,
    private readonly redis: RedisService,
    private readonly audit: AuditService,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** The tenant behind a /saml/:tenantSlug route; a tenant without SAML enabled does not exist here. */
  async tenantBySlug(slug: string): Promise<Tenant> {
    const tenant = await this.ds.getRepository(Tenant).findOne({ where: { slug } });
    if (!tenant?.saml_enabled || !tenant.saml_entity_id || !tenant.saml_idp_sso_url) {
      throw AppError.notFound('SAML service provider');
    }
    return tenant;
  }

  acsUrl(tenant: Tenant): string {
    const base = (this.config.env.PUBLIC_BASE_URL ?? `http://localhost:${this.config.env.PORT}`).replace(/\/+$/, '');
    return `${base}/saml/${tenant.slug}/acs`;
  }

  private saml(tenant: Tenant): SAML {
    const options: SamlConfig = {
      issuer: tenant.saml_entity_id!,
      audience: tenant.saml_entity_id!,
      callbackUrl: this.acsUrl(tenant),
      entryPoint: tenant.saml_idp_sso_url!,
      idpCert: tenant.saml_idp_certificates,
      identifierFormat: EMAIL_FORMAT,
      // Signed assertions are required; a signature over the whole response alone is not enough.
      wantAssertionsSigned: true,
      wantAuthnResponseSigned: false,
      acceptedClockSkewMs: SAML_SKEW_MS,
      validateInResponseTo: tenant.saml_idp_initiated ? ValidateInResponseTo.ifPresent : ValidateInResponseTo.always,
      requestIdExpirationPeriodMs: REQUEST_TTL_MS,
      cacheProvider: new RedisRequestCache(this.redis, tenant.id, REQUEST_TTL_MS),
      disableRequestedAuthnContext: true,
    };
    return new SAML(options);
  }

  metadata(tenant: Tenant): string {
    return this.saml(tenant).generateServiceProviderMetadata(null);
  }

  /** The IdP's SSO URL with a fresh AuthnRequest (HTTP-Redirect); its id is remembered for the ACS. */
  async loginUrl(tenant: Tenant, relayState: string | undefined): Promise<string> {
    if (relayState !== undefined && !allowedReturnPath(relayState, tenant.saml_return_paths)) {
      throw AppError.badRequest('RelayState is not an allowed return path', [
        { path: '/RelayState', message: 'not in the tenant’s saml_return_paths' },
      ]);
    }
    return this.saml(tenant).getAuthorizeUrlAsync(relayState ?? '', undefined, {});
  }

  /**
   * The ACS: every check of C1, then the user and the tokens. Any refusal is audited with its reason
   * and answered 401 (403 for an email of another tenant), with no token.
   */
  async acs(
    tenant: Tenant,
    body: { SAMLResponse?: unknown; RelayState?: unknown },
    client: { ip: string | null; userAgent: string | null },
  ): Promise<AcsOutcome> {
    try {
      const profile = await this.validate(tenant, body);
      const relay = typeof body.RelayState === 'string' && body.RelayState !== '' ? body.RelayState : null;
      const returnPath = relay === null ? null : allowedReturnPath(relay, tenant.saml_return_paths);
      if (relay !== null && returnPath === null) {
        throw new SamlRefusal('relay_state', 'RelayState is not an allowed return path');
      }
      const email = this.emailOf(profile);
      const issued = await this.signIn(tenant, email, client, profile);
      return { ...issued, returnPath };
    } catch (err) {
      const refusal = err instanceof SamlRefusal ? err : null;
      if (!refusal) throw err;
      await this.audit.record(this.ds.manager, {
        tenantId: tenant.id,
        action: 'saml.login_refused',
        actor: 'saml',
        ipAddress: client.ip,
        metadata: { reason: refusal.reason, detail: refusal.message.slice(0, 300) },
      });
      if (refusal.reason === 'email_other_tenant') throw AppError.forbidden(refusal.message);
      throw AppError.unauthorized(`SAML response refused: ${refusal.reason}`);
    }
  }

  private async validate(tenant: Tenant, body: { SAMLResponse?: unknown }): Promise<Profile> {
    const encoded = body.SAMLResponse;
    if (typeof encoded !== 'string' || encoded.length === 0 || encoded.length > MAX_RESPONSE_BYTES) {
      throw new SamlRefusal('malformed', 'SAMLResponse missing or too large');
    }
    const xml = Buffer.from(encoded, 'base64').toString('utf8');
    if (hasDoctype(xml)) throw new SamlRefusal('doctype', 'a DOCTYPE or entity declaration is refused');
    const acs = this.acsUrl(tenant);
    const root = parseRoot(xml);
    if (!root) throw new SamlRefusal('malformed', 'not a SAML Response');
    // The Response element may be unsigned; Destination only says where the IdP meant it to go.
    if (root.destination !== acs) {
      throw new SamlRefusal('destination', `Destination ${JSON.stringify(root.destination)} is not ${acs}`);
    }
    let profile: Profile | null;
    try {
      ({ profile } = await this.saml(tenant).validatePostResponseAsync({ SAMLResponse: encoded }));
    } catch (err) {
      throw classify(err as Error, root);
    }
    if (!profile) throw new SamlRefusal('malformed', 'no assertion');
    // From here on only the signed assertion is read (profile.getAssertion() is built from it).
    const assertion = (profile.getAssertion?.() as { Assertion?: SignedAssertion } | undefined)?.Assertion;
    if (!assertion?.$?.ID) throw new SamlRefusal('malformed', 'assertion without an ID');
    const recipients = (assertion.Subject?.[0]?.SubjectConfirmation ?? [])
      .map((c) => c.SubjectConfirmationData?.[0]?.$?.Recipient)
      .filter((r): r is string => typeof r === 'string');
    if (recipients.length === 0 || recipients.some((r) => r !== acs)) {
      throw new SamlRefusal('recipient', `Recipient ${JSON.stringify(recipients)} is not ${acs}`);
    }
    // node-saml compares the issuer of logout messages only; the assertion's is checked here.
    if (tenant.saml_idp_entity_id && profile.issuer !== tenant.saml_idp_entity_id) {
      throw new SamlRefusal('issuer', `issuer ${JSON.stringify(profile.issuer)} is not ${tenant.saml_idp_entity_id}`);
    }
    await this.acceptOnce(tenant, assertion);
    return profile;
  }

  /** Each assertion id once, remembered until the assertion could no longer pass anyway. */
  private async acceptOnce(tenant: Tenant, assertion: SignedAssertion): Promise<void> {
    const ends = [
      assertion.Conditions?.[0]?.$?.NotOnOrAfter,
      ...(assertion.Subject?.[0]?.SubjectConfirmation ?? []).map(
        (c) => c.SubjectConfirmationData?.[0]?.$?.NotOnOrAfter,
      ),
    ]
      .map((v) => (v ? Date.parse(v) : NaN))
      .filter((v) => Number.isFinite(v));
    const until = ends.length ? Math.max(...ends) + SAML_SKEW_MS : Date.now() + 24 * 3_600_000;
    const ttl = Math.max(1_000, until - Date.now());
    const key = this.redis.key('saml', 'assertion', tenant.id, assertion.$.ID);
    const fresh = await this.redis.client.set(key, '1', 'PX', ttl, 'NX');
    if (!fresh) throw new SamlRefusal('replay', `assertion ${assertion.$.ID} was already used`);
  }

  private emailOf(profile: Profile): string {
    const candidates = [profile.nameID, profile.email, profile.mail].filter((v): v is string => typeof v === 'string');
    const email = candidates.find((v) => EMAIL.test(v.trim()));
    if (!email) throw new SamlRefusal('no_email', 'the assertion carries no email address');
    return email.trim().toLowerCase();
  }

  private async signIn(
    tenant: Tenant,
    email: string,
    client: { ip: string | null; userAgent: string | null },
    profile: Profile,
  ): Promise<{ tokens: SamlTokens; user: AcsOutcome['user'] }> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.ds.transaction(async (m) => {
          const existing = await m
            .getRepository(User)
            .createQueryBuilder('u')
            .where('lower(u.email) = :email', { email })
            .getOne();
          if (existing && existing.tenant_id !== tenant.id) {
            throw new SamlRefusal('email_other_tenant', 'This email address belongs to another organization');
          }
          const user =
            existing ??
            (await m.save(
              m.create(User, {
                tenant_id: tenant.id,
                email,
                password_hash: null,
                role: 'member',
                email_verified: true,
              }),
            ));
          const tokens = await this.issue(m, user, client);
          await this.audit.record(m, {
            tenantId: tenant.id,
            action: 'saml.login',
            actor: `user:${user.id}`,
            resourceId: user.id,
            ipAddress: client.ip,
            metadata: { created: !existing, idp: profile.issuer ?? null, session_index: profile.sessionIndex ?? null },
          });
          return { tokens, user: { id: user.id, email: user.email, created: !existing } };
        });
      } catch (err) {
        // Two first logins of one email at once: the loser of the unique index finds the winner's user.
        if (attempt === 0 && err instanceof QueryFailedError && (err as { code?: string }).code === '23505') continue;
        throw err;
      }
    }
  }

  /** Managed: the session and tokens of a password login (one implementation); self-hosted: an 8 h tenant JWT. */
  private async issue(m: EntityManager, user: User, client: { ip: string | null; userAgent: string | null }) {
    if (this.config.isManaged) {
      const sessions = this.moduleRef.get(SessionsService, { strict: false });
      return sessions.open(m, user, client);
    }
    const access = signTenantToken(
      this.config.secrets.jwtSecret,
      { tenant_id: user.tenant_id, sub: user.id },
      SELF_HOSTED_TTL_SECONDS,
    );
    return { access_token: access, token_type: 'Bearer' as const, expires_in: SELF_HOSTED_TTL_SECONDS };
  }
}

interface SignedAssertion {
  $: { ID: string };
  Conditions?: { $?: { NotOnOrAfter?: string } }[];
  Subject?: {
    SubjectConfirmation?: { SubjectConfirmationData?: { $?: { Recipient?: string; NotOnOrAfter?: string } }[] }[];
  }[];
}

interface RootInfo {
  destination: string | null;
  assertions: number;
  timestamps: { notBefore: number[]; notOnOrAfter: number[] };
}

/** The Response element's Destination and, for naming a refusal only, the assertions' time bounds. */
function parseRoot(xml: string): RootInfo | null {
  try {
    const doc = new DOMParser({
      onError: (level) => {
        if (level !== 'warning') throw new Error('not well-formed');
      },
    }).parseFromString(xml, 'text/xml');
    const root = doc.documentElement;
    if (!root || root.localName !== 'Response' || root.namespaceURI !== 'urn:oasis:names:tc:SAML:2.0:protocol') {
      return null;
    }
    const times = (attr: string) => {
      const out: number[] = [];
      for (const tag of ['Conditions', 'SubjectConfirmationData']) {
        const list = doc.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:assertion', tag);
        for (let i = 0; i < list.length; i++) {
          const v = Date.parse(list.item(i)!.getAttribute(attr) ?? '');
          if (Number.isFinite(v)) out.push(v);
        }
      }
      return out;
    };
    return {
      destination: root.getAttribute('Destination'),
      assertions: doc.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:assertion', 'Assertion').length,
      timestamps: { notBefore: times('NotBefore'), notOnOrAfter: times('NotOnOrAfter') },
    };
  } catch {
    return null;
  }
}

/**
 * Names the reason node-saml refused a response, for the audit entry. Where its message is generic
 * ("no valid subject confirmation") the response's own time bounds name it; either way it was refused.
 */
function classify(err: Error, root: RootInfo): SamlRefusal {
  const msg = err.message;
  const now = Date.now();
  const timeReason = (): RefusalReason | null => {
    if (root.timestamps.notOnOrAfter.some((t) => now - SAML_SKEW_MS >= t)) return 'expired';
    if (root.timestamps.notBefore.some((t) => now + SAML_SKEW_MS < t)) return 'not_yet_valid';
    return null;
  };
  let reason: RefusalReason;
  if (/multiple assertions/i.test(msg) || (/signature/i.test(msg) && root.assertions > 1))
    reason = 'signature_wrapping';
  else if (/signature/i.test(msg)) reason = 'signature';
  else if (/InResponseTo is missing/i.test(msg)) reason = 'idp_initiated';
  else if (/InResponseTo/i.test(msg)) reason = 'in_response_to';
  else if (/not yet valid/i.test(msg)) reason = 'not_yet_valid';
  else if (/expired/i.test(msg)) reason = 'expired';
  else if (/audience/i.test(msg)) reason = 'audience';
  else if (/issuer/i.test(msg)) reason = 'issuer';
  else if (/subject confirmation/i.test(msg)) reason = timeReason() ?? 'recipient';
  else if (/SAML provider returned/i.test(msg)) reason = 'idp_status';
  else reason = 'malformed';
  return new SamlRefusal(reason, msg);
}
