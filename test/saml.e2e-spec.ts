import { DOMParser } from '@xmldom/xmldom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import {
  closedPort,
  encode,
  generateIdpKey,
  newId,
  TestIdp,
  type AuthnRequestSeen,
  type IdpKey,
  type ResponseOptions,
} from './helpers/saml-idp.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

const BASE = 'http://sp.test';
const acsOf = (slug: string) => `${BASE}/saml/${slug}/acs`;
const entityOf = (slug: string) => `https://sp.test/saml/${slug}`;

describe('SAML single sign-on (self-hosted)', () => {
  let t: TestApp;
  let idp: TestIdp;
  let otherKey: IdpKey;
  let a: TenantFixture;
  let b: TenantFixture;
  let counter = 0;
  const email = (label: string) => `${label}-${process.pid}-${++counter}@corp.example`;
  const admin = () => `Bearer ${t.adminToken()}`;

  const configure = (tenantId: string, body: Record<string, unknown>) =>
    t.http().patch(`/admin/tenants/${tenantId}`).set('Authorization', admin()).send(body);

  const enable = async (f: TenantFixture, extra: Record<string, unknown> = {}) =>
    configure(f.id, {
      saml_enabled: true,
      saml_metadata_url: idp.metadataUrl,
      saml_entity_id: entityOf(f.slug),
      saml_return_paths: ['/app/'],
      ...extra,
    }).expect(200);

  /** GET /saml/:slug/login, then what the IdP read from the redirect. */
  const startLogin = async (slug: string, relayState?: string): Promise<AuthnRequestSeen> => {
    const res = await t
      .http()
      .get(`/saml/${slug}/login`)
      .query(relayState ? { RelayState: relayState } : {})
      .expect(302);
    const location = new URL(res.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(idp.ssoUrl);
    return TestIdp.readAuthnRequest(location)!;
  };

  const post = (slug: string, samlResponse: string, relayState?: string) =>
    t
      .http()
      .post(`/saml/${slug}/acs`)
      .type('form')
      .send({ SAMLResponse: samlResponse, ...(relayState ? { RelayState: relayState } : {}) });

  const opts = (f: TenantFixture, req: AuthnRequestSeen | null, user: string): ResponseOptions => ({
    inResponseTo: req?.id ?? null,
    destination: acsOf(f.slug),
    audience: entityOf(f.slug),
    email: user,
  });

  const audits = async (tenantId: string, action: string) =>
    (await t.ds.query(
      `SELECT actor, resource_id, metadata FROM audit_log WHERE tenant_id = $1 AND action = $2 ORDER BY created_at, id`,
      [tenantId, action],
    )) as { actor: string; resource_id: string | null; metadata: { reason?: string; created?: boolean } }[];

  const userCount = async (addr: string) =>
    Number((await t.ds.query(`SELECT count(*)::int AS n FROM users WHERE email = $1`, [addr]))[0].n);

  /** A refused post: 401 (or the given status), no token, and exactly one new refusal with this reason. */
  const expectRefused = async (f: TenantFixture, samlResponse: string, reason: string, status = 401) => {
    const before = (await audits(f.id, 'saml.login_refused')).length;
    const res = await post(f.slug, samlResponse);
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body.access_token).toBeUndefined();
    expect(JSON.stringify(res.body)).not.toMatch(/eyJ/);
    const after = await audits(f.id, 'saml.login_refused');
    expect(after.length).toBe(before + 1);
    expect(after.at(-1)!.metadata.reason).toBe(reason);
  };

  beforeAll(async () => {
    idp = await TestIdp.start();
    otherKey = generateIdpKey('attacker');
    t = await startApp({ env: { PUBLIC_BASE_URL: BASE, SAML_METADATA_REFRESH_MINUTES: '0' } });
    a = await createTenant(t);
    b = await createTenant(t);
    await enable(a);
    await enable(b);
  });

  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  it('configuration stores the parsed IdP metadata', async () => {
    const res = await t.http().get(`/admin/tenants/${a.id}`).set('Authorization', admin()).expect(200);
    expect(res.body).toMatchObject({
      saml_enabled: true,
      saml_metadata_url: idp.metadataUrl,
      saml_entity_id: entityOf(a.slug),
      saml_idp_sso_url: idp.ssoUrl,
      saml_idp_certificates: 1,
      saml_return_paths: ['/app/'],
      saml_metadata_error: null,
    });
  });

  it('SP metadata parses with the configured entity id, the ACS URL and the email NameID format', async () => {
    const res = await t.http().get(`/saml/${a.slug}/metadata`).expect(200);
    expect(res.headers['content-type']).toMatch(/xml/);
    const doc = new DOMParser().parseFromString(res.text, 'text/xml');
    const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
    const root = doc.documentElement!;
    expect(root.namespaceURI).toBe(MD);
    expect(root.localName).toBe('EntityDescriptor');
    expect(root.getAttribute('entityID')).toBe(entityOf(a.slug));
    const sp = doc.getElementsByTagNameNS(MD, 'SPSSODescriptor').item(0)!;
    expect(sp.getAttribute('protocolSupportEnumeration')).toBe('urn:oasis:names:tc:SAML:2.0:protocol');
    const acs = doc.getElementsByTagNameNS(MD, 'AssertionConsumerService').item(0)!;
    expect(acs.getAttribute('Location')).toBe(acsOf(a.slug));
    expect(acs.getAttribute('Binding')).toBe('urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST');
    expect(doc.getElementsByTagNameNS(MD, 'NameIDFormat').item(0)!.textContent).toBe(
      'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
    );
  });

  it('happy path: login redirect, signed response, ACS, user created, token works; a second login finds the same user', async () => {
    const user = email('alice');
    const req = await startLogin(a.slug, '/app/home');
    expect(req.acsUrl).toBe(acsOf(a.slug));
    expect(req.issuer).toBe(entityOf(a.slug));
    expect(req.relayState).toBe('/app/home');

    const res = await post(a.slug, idp.signedResponse(opts(a, req, user.toUpperCase())), '/app/home').expect(303);
    const location = new URL(res.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(`${BASE}/app/home`);
    const fragment = new URLSearchParams(location.hash.slice(1));
    const token = fragment.get('access_token')!;
    expect(fragment.get('token_type')).toBe('Bearer');
    expect(Number(fragment.get('expires_in'))).toBe(8 * 3600);

    const [row] = (await t.ds.query(`SELECT * FROM users WHERE email = $1`, [user])) as {
      id: string;
      tenant_id: string;
      role: string;
      password_hash: string | null;
      email_verified: boolean;
    }[];
    expect(row).toMatchObject({ tenant_id: a.id, role: 'member', password_hash: null, email_verified: true });
    const me = await t.http().get('/tenant').set('Authorization', `Bearer ${token}`).expect(200);
    expect(me.body.tenant.id).toBe(a.id);
    expect(me.body.credential.actor).toBe(`user:${row.id}`);

    // No RelayState: the tokens come as JSON, for the same user.
    const req2 = await startLogin(a.slug);
    const again = await post(a.slug, idp.signedResponse(opts(a, req2, user))).expect(200);
    expect(again.body).toMatchObject({ token_type: 'Bearer', user: { id: row.id, email: user, created: false } });
    await t.http().get('/tenant').set('Authorization', `Bearer ${again.body.access_token}`).expect(200);
    expect(await userCount(user)).toBe(1);

    const logins = (await audits(a.id, 'saml.login')).filter((e) => e.resource_id === row.id);
    expect(logins.map((e) => [e.actor, e.metadata.created])).toEqual([
      [`user:${row.id}`, true],
      [`user:${row.id}`, false],
    ]);
  });

  describe('refused, each with its audited reason and no token', () => {
    it('an unsigned response', async () => {
      const req = await startLogin(a.slug);
      await expectRefused(a, idp.signedResponse({ ...opts(a, req, email('u')), sign: false }), 'signature');
    });

    it('a response signed with another key', async () => {
      const req = await startLogin(a.slug);
      await expectRefused(a, idp.signedResponse({ ...opts(a, req, email('u')), key: otherKey }), 'signature');
    });

    it('signature wrapping: a second, unsigned assertion beside the signed one', async () => {
      for (const order of ['evil first', 'signed first']) {
        const o = opts(a, await startLogin(a.slug), email('victim'));
        const signed = idp.assertion(o).xml;
        const evil = idp.assertion({ ...o, email: email('attacker'), sign: false }).xml;
        const both = order === 'evil first' ? evil + signed : signed + evil;
        await expectRefused(a, encode(idp.response(o, both)), 'signature_wrapping');
      }
    });

    it('signature wrapping: the signed assertion inside an unsigned one, or hidden in Extensions', async () => {
      const o = opts(a, await startLogin(a.slug), email('victim'));
      const signed = idp.assertion(o).xml;
      const evil = idp.assertion({ ...o, email: email('attacker'), sign: false }).xml;
      const around = evil.replace('</saml:Subject>', `</saml:Subject>${signed}`);
      await expectRefused(a, encode(idp.response(o, around)), 'signature_wrapping');

      const o2 = opts(a, await startLogin(a.slug), email('victim'));
      const signed2 = idp.assertion(o2).xml;
      const evil2 = idp.assertion({ ...o2, email: email('attacker'), sign: false }).xml;
      const hidden = idp
        .response(o2, evil2)
        .replace('<samlp:Status>', `<samlp:Extensions>${signed2}</samlp:Extensions><samlp:Status>`);
      await expectRefused(a, encode(hidden), 'signature_wrapping');
    });

    it('an expired assertion (beyond the two minutes of skew)', async () => {
      const req = await startLogin(a.slug);
      const now = Date.now();
      await expectRefused(
        a,
        idp.signedResponse({
          ...opts(a, req, email('u')),
          notBefore: new Date(now - 20 * 60_000),
          notOnOrAfter: new Date(now - 3 * 60_000),
        }),
        'expired',
      );
    });

    it('an assertion not yet valid (beyond the two minutes of skew)', async () => {
      const req = await startLogin(a.slug);
      const now = Date.now();
      await expectRefused(
        a,
        idp.signedResponse({
          ...opts(a, req, email('u')),
          notBefore: new Date(now + 3 * 60_000),
          notOnOrAfter: new Date(now + 20 * 60_000),
        }),
        'not_yet_valid',
      );
    });

    it('a wrong audience', async () => {
      const req = await startLogin(a.slug);
      await expectRefused(
        a,
        idp.signedResponse({ ...opts(a, req, email('u')), audience: 'https://other.sp/' }),
        'audience',
      );
    });

    it('an assertion from another issuer, even signed with the IdP key', async () => {
      const req = await startLogin(a.slug);
      await expectRefused(
        a,
        idp.signedResponse({ ...opts(a, req, email('u')), issuer: 'https://other-idp/' }),
        'issuer',
      );
    });

    it('a wrong Destination, and a wrong Recipient', async () => {
      const req = await startLogin(a.slug);
      const o = { ...opts(a, req, email('u')), destination: `${BASE}/elsewhere`, recipient: acsOf(a.slug) };
      await expectRefused(a, idp.signedResponse(o), 'destination');
      const req2 = await startLogin(a.slug);
      await expectRefused(
        a,
        idp.signedResponse({ ...opts(a, req2, email('u')), recipient: `${BASE}/elsewhere` }),
        'recipient',
      );
    });

    it('an unknown InResponseTo, and another tenant’s', async () => {
      await startLogin(a.slug);
      await expectRefused(
        a,
        idp.signedResponse({ ...opts(a, null, email('u')), inResponseTo: newId() }),
        'in_response_to',
      );
      const reqOfB = await startLogin(b.slug);
      await expectRefused(a, idp.signedResponse(opts(a, reqOfB, email('u'))), 'in_response_to');
    });

    it('an IdP-initiated response (no InResponseTo) while the tenant does not allow it', async () => {
      await expectRefused(a, idp.signedResponse(opts(a, null, email('u'))), 'idp_initiated');
    });

    it('the same response posted twice', async () => {
      const user = email('twice');
      const req = await startLogin(a.slug);
      const response = idp.signedResponse(opts(a, req, user));
      await post(a.slug, response).expect(200);
      await expectRefused(a, response, 'in_response_to');
    });

    it('a response for tenant A posted to tenant B’s ACS', async () => {
      const req = await startLogin(a.slug);
      await expectRefused(b, idp.signedResponse(opts(a, req, email('u'))), 'destination');
      // Even with B's own Destination and Recipient, A's request id and audience are not B's.
      const req2 = await startLogin(a.slug);
      await expectRefused(
        b,
        idp.signedResponse({ ...opts(a, req2, email('u')), destination: acsOf(b.slug) }),
        'in_response_to',
      );
    });

    it('a DOCTYPE with an entity', async () => {
      const req = await startLogin(a.slug);
      const xml = idp.response(opts(a, req, email('u')), idp.assertion(opts(a, req, email('u'))).xml);
      const withDtd = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x "y">]>${xml}`;
      await expectRefused(a, encode(withDtd), 'doctype');
    });

    it('a RelayState outside the allow-list: 400 at login, refused at the ACS', async () => {
      const res = await t.http().get(`/saml/${a.slug}/login`).query({ RelayState: '//evil.example/app/' }).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      const req = await startLogin(a.slug);
      const before = (await audits(a.id, 'saml.login_refused')).length;
      const acs = await post(a.slug, idp.signedResponse(opts(a, req, email('u'))), 'https://evil.example/').expect(401);
      expect(acs.headers.location).toBeUndefined();
      const after = await audits(a.id, 'saml.login_refused');
      expect(after.length).toBe(before + 1);
      expect(after.at(-1)!.metadata.reason).toBe('relay_state');
    });

    it('an email that belongs to a user of another tenant: 403', async () => {
      const user = email('shared');
      await post(b.slug, idp.signedResponse(opts(b, await startLogin(b.slug), user))).expect(200);
      await expectRefused(a, idp.signedResponse(opts(a, await startLogin(a.slug), user)), 'email_other_tenant', 403);
      const owners = (await t.ds.query(`SELECT tenant_id FROM users WHERE email = $1`, [user])) as {
        tenant_id: string;
      }[];
      expect(owners).toEqual([{ tenant_id: b.id }]);
    });
  });

  it('IdP-initiated login when the tenant allows it; its assertion is accepted once', async () => {
    const c = await createTenant(t);
    await enable(c, { saml_idp_initiated: true });
    const response = idp.signedResponse(opts(c, null, email('idp')));
    await post(c.slug, response).expect(200);
    await expectRefused(c, response, 'replay');
  });

  it('certificate rollover: metadata with two certificates accepts responses signed by either', async () => {
    const next = generateIdpKey('idp-next');
    idp.metadataKeys = [idp.key, next];
    try {
      const refreshed = await t
        .http()
        .post(`/admin/tenants/${a.id}/saml/refresh`)
        .set('Authorization', admin())
        .expect(200);
      expect(refreshed.body).toMatchObject({ refreshed: true, error: null, certificates: 2 });
      await post(
        a.slug,
        idp.signedResponse({ ...opts(a, await startLogin(a.slug), email('old')), key: idp.key }),
      ).expect(200);
      await post(a.slug, idp.signedResponse({ ...opts(a, await startLogin(a.slug), email('new')), key: next })).expect(
        200,
      );
      await expectRefused(
        a,
        idp.signedResponse({ ...opts(a, await startLogin(a.slug), email('u')), key: otherKey }),
        'signature',
      );

      // A refresh that fails keeps the last good copy.
      idp.metadataOverride = '<html>maintenance</html>';
      const failed = await t
        .http()
        .post(`/admin/tenants/${a.id}/saml/refresh`)
        .set('Authorization', admin())
        .expect(200);
      expect(failed.body).toMatchObject({ refreshed: false, certificates: 2, sso_url: idp.ssoUrl });
      expect(failed.body.error).toMatch(/IDPSSODescriptor|EntityDescriptor/);
      await post(a.slug, idp.signedResponse({ ...opts(a, await startLogin(a.slug), email('new')), key: next })).expect(
        200,
      );
    } finally {
      idp.metadataOverride = null;
      idp.metadataKeys = [idp.key];
    }
  });

  it('a tenant without SAML enabled: 404 on all three routes', async () => {
    const c = await createTenant(t);
    const check = async (slug: string) => {
      await t.http().get(`/saml/${slug}/metadata`).expect(404);
      await t.http().get(`/saml/${slug}/login`).expect(404);
      await t.http().post(`/saml/${slug}/acs`).type('form').send({ SAMLResponse: 'x' }).expect(404);
    };
    await check(c.slug);
    await check('no-such-tenant');
    await enable(c);
    await t.http().get(`/saml/${c.slug}/metadata`).expect(200);
    await configure(c.id, { saml_enabled: false }).expect(200);
    await check(c.slug);
  });

  it('a metadata URL to a closed port, or one that is not metadata: 400 at configuration, nothing stored', async () => {
    const c = await createTenant(t);
    const port = await closedPort();
    const res = await configure(c.id, {
      saml_enabled: true,
      saml_metadata_url: `http://127.0.0.1:${port}/metadata`,
      saml_entity_id: entityOf(c.slug),
    }).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details[0].path).toBe('/saml_metadata_url');
    expect(res.body.error.message).toMatch(/could not be fetched/);

    const notMetadata = await configure(c.id, {
      saml_metadata_url: `${idp.base}/nothing-here`,
      saml_entity_id: entityOf(c.slug),
    }).expect(400);
    expect(notMetadata.body.error.message).toMatch(/HTTP 404/);
    const after = await t.http().get(`/admin/tenants/${c.id}`).set('Authorization', admin()).expect(200);
    expect(after.body).toMatchObject({ saml_enabled: false, saml_metadata_url: null, saml_idp_certificates: 0 });
  });

  it('inline metadata XML for an IdP without a metadata URL', async () => {
    const c = await createTenant(t);
    await configure(c.id, {
      saml_enabled: true,
      saml_metadata_xml: idp.metadataXml(),
      saml_entity_id: entityOf(c.slug),
    }).expect(200);
    await post(c.slug, idp.signedResponse(opts(c, await startLogin(c.slug), email('inline')))).expect(200);
    const bad = await configure(c.id, { saml_metadata_xml: '<x/>' }).expect(400);
    expect(bad.body.error.details[0].path).toBe('/saml_metadata_xml');
  });
});
