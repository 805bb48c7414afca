import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { TestIdp, type AuthnRequestSeen } from './helpers/saml-idp.js';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

const BASE = 'http://portal.test';

describe('SAML single sign-on (managed)', () => {
  let t: TestApp;
  let guarded: TestApp;
  let smtp: SmtpSink;
  let idp: TestIdp;
  let tenant: TenantFixture;
  const admin = (app: TestApp) => `Bearer ${app.adminToken()}`;
  const entity = (slug: string) => `https://portal.test/saml/${slug}`;

  const startLogin = async (slug: string): Promise<AuthnRequestSeen> => {
    const res = await t.http().get(`/saml/${slug}/login`).expect(302);
    return TestIdp.readAuthnRequest(new URL(res.headers.location as string))!;
  };

  beforeAll(async () => {
    smtp = await startSmtpSink();
    idp = await TestIdp.start();
    const env = {
      DEPLOYMENT_MODE: 'managed',
      SMTP_URL: smtp.url,
      PUBLIC_BASE_URL: BASE,
      SAML_METADATA_REFRESH_MINUTES: '0',
    };
    // The test IdP listens on loopback, which the managed deployment's address guard refuses by default.
    t = await startApp({ env: { ...env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    guarded = await startApp({ env, shareWith: t });
    tenant = await createTenant(t);
    await t
      .http()
      .patch(`/admin/tenants/${tenant.id}`)
      .set('Authorization', admin(t))
      .send({ saml_enabled: true, saml_metadata_url: idp.metadataUrl, saml_entity_id: entity(tenant.slug) })
      .expect(200);
  });

  afterAll(async () => {
    await guarded?.close();
    await t?.close();
    await idp?.close();
    await smtp?.close();
  });

  it('issues an access token and a refresh session as a password login does', async () => {
    const email = `sso-${process.pid}@corp.example`;
    const req = await startLogin(tenant.slug);
    const res = await t
      .http()
      .post(`/saml/${tenant.slug}/acs`)
      .type('form')
      .send({
        SAMLResponse: idp.signedResponse({
          inResponseTo: req.id,
          destination: `${BASE}/saml/${tenant.slug}/acs`,
          audience: entity(tenant.slug),
          email,
        }),
      })
      .expect(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 900, user: { email, created: true } });
    expect(typeof res.body.refresh_token).toBe('string');

    const profile = await t
      .http()
      .get('/v1/account/profile')
      .set('Authorization', `Bearer ${res.body.access_token}`)
      .expect(200);
    expect(profile.body).toMatchObject({ email, role: 'member' });
    const sessions = (await t.ds.query(`SELECT user_id, tenant_id FROM sessions WHERE user_id = $1`, [
      res.body.user.id,
    ])) as { user_id: string; tenant_id: string }[];
    expect(sessions).toEqual([{ user_id: res.body.user.id, tenant_id: tenant.id }]);

    const refreshed = await t
      .http()
      .post('/v1/auth/refresh')
      .send({ refresh_token: res.body.refresh_token })
      .expect(200);
    expect(typeof refreshed.body.access_token).toBe('string');
  });

  it('fetches metadata through the webhook address guard: a loopback URL is a 400 at configuration', async () => {
    const other = await createTenant(guarded);
    const res = await guarded
      .http()
      .patch(`/admin/tenants/${other.id}`)
      .set('Authorization', admin(guarded))
      .send({ saml_enabled: true, saml_metadata_url: idp.metadataUrl, saml_entity_id: entity(other.slug) })
      .expect(400);
    expect(res.body.error.details[0].path).toBe('/saml_metadata_url');
    expect(res.body.error.message).toMatch(/not allowed/);
  });
});
