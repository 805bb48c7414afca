import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import {
  bearer,
  login,
  mailTo,
  PASSWORD,
  registerVerified,
  uniqueEmail,
  type Account,
  type Tokens,
} from './helpers/accounts.js';
import { TestIdp } from './helpers/saml-idp.js';
import { startSmtpSink, tokenFromMail, type SmtpSink } from './helpers/smtp.js';

const BASE = 'http://portal.test';
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:132.0) Gecko/20100101 Firefox/132.0';
const PHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';

describe('managed /v1: display names, the sessions of a user, and self-service single sign-on', () => {
  let t: TestApp;
  let guarded: TestApp;
  let smtp: SmtpSink;
  let idp: TestIdp;
  let owner: Account;
  let ownerTokens: Tokens;

  const loginAs = async (email: string, agent: string, password = PASSWORD): Promise<Tokens> => {
    const res = await t.http().post('/v1/auth/login').set('User-Agent', agent).send({ email, password }).expect(200);
    return res.body as Tokens;
  };

  async function invite(role: 'admin' | 'member', name?: string) {
    const email = uniqueEmail(role);
    await t.http().post('/v1/account/team/invitations').set(bearer(ownerTokens)).send({ email, role }).expect(201);
    const token = tokenFromMail(await mailTo(smtp, email));
    const accepted = await t
      .http()
      .post('/v1/auth/accept-invitation')
      .send({ token, password: PASSWORD, ...(name ? { name } : {}) })
      .expect(201);
    return { id: accepted.body.user.id as string, email, tokens: await login(t, email) };
  }

  beforeAll(async () => {
    smtp = await startSmtpSink();
    idp = await TestIdp.start();
    const env = { DEPLOYMENT_MODE: 'managed', SMTP_URL: smtp.url, PUBLIC_BASE_URL: BASE };
    // The test IdP listens on loopback, which the managed deployment's address guard refuses by default.
    t = await startApp({ env: { ...env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SAML_METADATA_REFRESH_MINUTES: '0' } });
    guarded = await startApp({ env: { ...env, SAML_METADATA_REFRESH_MINUTES: '0' }, shareWith: t });
    owner = await registerVerified(t, smtp);
    ownerTokens = await login(t, owner.email);
  });

  afterAll(async () => {
    await guarded?.close();
    await t?.close();
    await idp?.close();
    await smtp?.close();
  });

  describe('display name', () => {
    it('is given at sign-up and when joining, changed on the profile, and shown to the team', async () => {
      const email = uniqueEmail('named');
      const slug = `named-${Date.now().toString(36)}`;
      await t
        .http()
        .post('/v1/auth/register')
        .send({ email, password: PASSWORD, organization: 'Named GmbH', slug, name: '  Ada Lovelace ' })
        .expect(202);
      const token = tokenFromMail(await mailTo(smtp, email));
      await t.http().post('/v1/auth/verify-email').send({ token }).expect(200);
      const tokens = await login(t, email);
      const me = await t.http().get('/v1/account/profile').set(bearer(tokens)).expect(200);
      expect(me.body).toMatchObject({ email, name: 'Ada Lovelace', role: 'owner' });

      const renamed = await t
        .http()
        .patch('/v1/account/profile')
        .set(bearer(tokens))
        .send({ name: 'Ada King' })
        .expect(200);
      expect(renamed.body.name).toBe('Ada King');
      // A name change alone keeps every session.
      await t.http().get('/v1/account/profile').set(bearer(tokens)).expect(200);

      const joined = await invite('member', 'Grace Hopper');
      const team = await t.http().get('/v1/account/team').set(bearer(ownerTokens)).expect(200);
      const row = (team.body.members as { id: string; name: string | null }[]).find((m) => m.id === joined.id);
      expect(row?.name).toBe('Grace Hopper');

      const cleared = await t.http().patch('/v1/account/profile').set(bearer(tokens)).send({ name: '' }).expect(200);
      expect(cleared.body.name).toBeNull();
      const audit = (await t.ds.query(
        `SELECT action FROM audit_log WHERE actor = $1 AND action = 'profile.update' ORDER BY created_at`,
        [`user:${me.body.id}`],
      )) as { action: string }[];
      expect(audit).toHaveLength(2);
    });

    it('refuses an empty change, and a password change without both passwords, with the field concerned', async () => {
      const empty = await t.http().patch('/v1/account/profile').set(bearer(ownerTokens)).send({}).expect(400);
      expect(empty.body.error.code).toBe('VALIDATION_ERROR');
      const noCurrent = await t
        .http()
        .patch('/v1/account/profile')
        .set(bearer(ownerTokens))
        .send({ new_password: 'another long passphrase 7' })
        .expect(400);
      expect(noCurrent.body.error.details).toEqual([
        { path: '/current_password', message: 'required with new_password' },
      ]);
      const noNew = await t
        .http()
        .patch('/v1/account/profile')
        .set(bearer(ownerTokens))
        .send({ current_password: PASSWORD })
        .expect(400);
      expect(noNew.body.error.details[0].path).toBe('/new_password');
      const long = await t
        .http()
        .patch('/v1/account/profile')
        .set(bearer(ownerTokens))
        .send({ name: 'x'.repeat(201) })
        .expect(400);
      expect(long.body.error.code).toBe('VALIDATION_ERROR');
    });
  });

  describe('sessions', () => {
    it('lists the active sessions with device and last use, the current one marked, the newest first', async () => {
      const user = await invite('member');
      const laptop = await loginAs(user.email, FIREFOX);
      const phone = await loginAs(user.email, PHONE);
      const res = await t.http().get('/v1/auth/sessions').set(bearer(phone)).expect(200);
      const list = res.body.data as {
        id: string;
        device: string;
        current: boolean;
        first_used_at: string;
        last_used_at: string;
      }[];
      // The session of the invitation helper's login, the laptop and the phone.
      expect(list).toHaveLength(3);
      expect(list[0]).toMatchObject({ device: 'Safari on iOS', current: true, user_agent: PHONE });
      expect(list[1]).toMatchObject({ device: 'Firefox on Windows', current: false });
      expect(list.filter((s) => s.current)).toHaveLength(1);
      expect(Date.parse(list[0].last_used_at)).toBeGreaterThanOrEqual(Date.parse(list[1].last_used_at));
      // Another user sees only their own.
      const other = await t.http().get('/v1/auth/sessions').set(bearer(ownerTokens)).expect(200);
      expect((other.body.data as { id: string }[]).some((s) => list.some((l) => l.id === s.id))).toBe(false);

      // A refresh rotates the session: the list shows the new one, not the old.
      const rotated = await t.http().post('/v1/auth/refresh').send({ refresh_token: laptop.refresh_token }).expect(200);
      const after = await t.http().get('/v1/auth/sessions').set(bearer(phone)).expect(200);
      expect(after.body.data).toHaveLength(3);
      expect((after.body.data as { id: string }[]).some((s) => s.id === list[1].id)).toBe(false);
      // The rotated session keeps the sign-in it began with: first use stays, last use moves on.
      // (Its device is now the refreshing client's: the one session that was not listed before.)
      const renewed = (after.body.data as { id: string; first_used_at: string; last_used_at: string }[]).find(
        (s) => !list.some((l) => l.id === s.id),
      )!;
      expect(renewed.first_used_at).toBe(list[1].first_used_at);
      expect(Date.parse(renewed.last_used_at)).toBeGreaterThanOrEqual(Date.parse(renewed.first_used_at));
      expect(Date.parse(renewed.last_used_at)).toBeGreaterThanOrEqual(Date.parse(list[1].last_used_at));
      await t
        .http()
        .get('/v1/account/profile')
        .set(bearer(rotated.body as Tokens))
        .expect(200);
    });

    it('ends one session of the user: its tokens stop at once, the others go on; audited', async () => {
      const user = await invite('member');
      const laptop = await loginAs(user.email, FIREFOX);
      const phone = await loginAs(user.email, PHONE);
      const list = (await t.http().get('/v1/auth/sessions').set(bearer(laptop)).expect(200)).body.data as {
        id: string;
        device: string;
      }[];
      const phoneSession = list.find((s) => s.device === 'Safari on iOS')!;
      await t.http().delete(`/v1/auth/sessions/${phoneSession.id}`).set(bearer(laptop)).expect(204);
      await t.http().get('/v1/account/profile').set(bearer(phone)).expect(401);
      await t.http().get('/v1/account/profile').set(bearer(laptop)).expect(200);
      // Gone already, someone else's, or not an id: refused without telling which.
      await t.http().delete(`/v1/auth/sessions/${phoneSession.id}`).set(bearer(laptop)).expect(404);
      const ownerSession = (await t.http().get('/v1/auth/sessions').set(bearer(ownerTokens)).expect(200)).body
        .data[0] as { id: string };
      await t.http().delete(`/v1/auth/sessions/${ownerSession.id}`).set(bearer(laptop)).expect(404);
      await t.http().get('/v1/account/profile').set(bearer(ownerTokens)).expect(200);
      await t.http().delete('/v1/auth/sessions/not-a-uuid').set(bearer(laptop)).expect(400);
      const audit = (await t.ds.query(`SELECT resource_id FROM audit_log WHERE action = 'session.revoke'`)) as {
        resource_id: string;
      }[];
      expect(audit.map((a) => a.resource_id)).toContain(phoneSession.id);
      // The ended session's refresh token is refused; presented after its end, it counts as a stolen copy and
      // ends the user's other sessions too, as after a logout.
      await t.http().post('/v1/auth/refresh').send({ refresh_token: phone.refresh_token }).expect(401);
      await t.http().get('/v1/account/profile').set(bearer(laptop)).expect(401);
    });

    it('logs out everywhere: every token of the user stops, the cookie is cleared; other users go on', async () => {
      const user = await invite('admin');
      const laptop = await loginAs(user.email, FIREFOX);
      const phone = await loginAs(user.email, PHONE);
      const res = await t.http().delete('/v1/auth/sessions').set(bearer(phone)).expect(204);
      expect(String(res.headers['set-cookie'])).toMatch(/sdf_refresh=;.*Max-Age=0/);
      for (const tokens of [laptop, phone, user.tokens]) {
        await t.http().get('/v1/account/profile').set(bearer(tokens)).expect(401);
        await t.http().post('/v1/auth/refresh').send({ refresh_token: tokens.refresh_token }).expect(401);
      }
      await t.http().get('/v1/account/profile').set(bearer(ownerTokens)).expect(200);
      const [entry] = (await t.ds.query(
        `SELECT metadata FROM audit_log WHERE action = 'session.revoke_all' AND actor = $1`,
        [`user:${user.id}`],
      )) as { metadata: { sessions_revoked: number } }[];
      expect(entry.metadata.sessions_revoked).toBe(3);
      // Signing in again works.
      await loginAs(user.email, FIREFOX);
    });
  });

  describe("the web front end's cookie logout", () => {
    it('ends the session of the cookie without an access token, clears the cookie, and refuses the cookie alone', async () => {
      const user = await invite('member');
      const tokens = await loginAs(user.email, FIREFOX);
      const cookie = `sdf_refresh=${encodeURIComponent(tokens.refresh_token)}`;
      // The cookie alone, or from another origin, ends nothing.
      await t.http().post('/v1/auth/session/logout').set('Cookie', cookie).expect(400);
      await t
        .http()
        .post('/v1/auth/session/logout')
        .set('Cookie', cookie)
        .set('X-SDF-Session', '1')
        .set('Origin', 'https://elsewhere.example')
        .expect(403);
      await t.http().get('/v1/account/profile').set(bearer(tokens)).expect(200);
      const res = await t
        .http()
        .post('/v1/auth/session/logout')
        .set('Cookie', cookie)
        .set('X-SDF-Session', '1')
        .expect(204);
      expect(String(res.headers['set-cookie'])).toMatch(/sdf_refresh=;.*Max-Age=0/);
      await t.http().get('/v1/account/profile').set(bearer(tokens)).expect(401);
      // The user's other sessions stay; a second call with the spent cookie ends nothing and says so quietly.
      await t.http().get('/v1/account/profile').set(bearer(user.tokens)).expect(200);
      await t.http().post('/v1/auth/session/logout').set('Cookie', cookie).set('X-SDF-Session', '1').expect(204);
      await t.http().get('/v1/account/profile').set(bearer(user.tokens)).expect(200);
      await t.http().post('/v1/auth/session/logout').set('X-SDF-Session', '1').expect(204);
      const audit = (await t.ds.query(`SELECT resource_id FROM audit_log WHERE action = 'logout' AND actor = $1`, [
        `user:${user.id}`,
      ])) as { resource_id: string }[];
      expect(audit).toHaveLength(1);
    });
  });

  describe('self-service single sign-on', () => {
    it('is for the owner alone: admins and members are refused', async () => {
      const admin = await invite('admin');
      const member = await invite('member');
      for (const tokens of [admin.tokens, member.tokens]) {
        const res = await t.http().get('/v1/account/sso').set(bearer(tokens)).expect(403);
        expect(res.body.error.message).toBe('Only the owner may configure single sign-on');
        await t.http().put('/v1/account/sso').set(bearer(tokens)).send({ enabled: false }).expect(403);
      }
    });

    it('shows what to give the identity provider before anything is configured', async () => {
      const res = await t.http().get('/v1/account/sso').set(bearer(ownerTokens)).expect(200);
      expect(res.body).toEqual({
        enabled: false,
        metadata_url: null,
        metadata_xml_set: false,
        idp_initiated: false,
        sp_entity_id: `${BASE}/saml/${owner.slug}`,
        sp_metadata_url: `${BASE}/saml/${owner.slug}/metadata`,
        acs_url: `${BASE}/saml/${owner.slug}/acs`,
        login_url: `${BASE}/saml/${owner.slug}/login?RelayState=%2Fapp%2F`,
        idp_entity_id: null,
        idp_sso_url: null,
        idp_certificates: 0,
        metadata_refreshed_at: null,
        metadata_error: null,
      });
      const on = await t.http().put('/v1/account/sso').set(bearer(ownerTokens)).send({ enabled: true }).expect(400);
      expect(on.body.error.details[0].path).toBe('/enabled');
      expect(on.body.error.message).not.toContain('saml_');
    });

    it('refuses metadata that does not load, with the same address guard as the operator, and changes nothing', async () => {
      const refused = await guarded
        .http()
        .put('/v1/account/sso')
        .set(bearer(ownerTokens))
        .send({ metadata_url: idp.metadataUrl, enabled: true })
        .expect(400);
      expect(refused.body.error.details[0].path).toBe('/metadata_url');
      const missing = await t
        .http()
        .put('/v1/account/sso')
        .set(bearer(ownerTokens))
        .send({ metadata_url: `${idp.metadataUrl}-missing`, enabled: true })
        .expect(400);
      expect(missing.body.error.details[0].path).toBe('/metadata_url');
      const broken = await t
        .http()
        .put('/v1/account/sso')
        .set(bearer(ownerTokens))
        .send({ metadata_xml: '<not-metadata/>' })
        .expect(400);
      expect(broken.body.error.details[0].path).toBe('/metadata_xml');
      const still = await t.http().get('/v1/account/sso').set(bearer(ownerTokens)).expect(200);
      expect(still.body).toMatchObject({ enabled: false, metadata_url: null, metadata_xml_set: false });
    });

    it('configures SSO from the IdP metadata; a sign-in started at login_url lands in the portal with tokens', async () => {
      const res = await t
        .http()
        .put('/v1/account/sso')
        .set(bearer(ownerTokens))
        .send({ metadata_url: idp.metadataUrl, enabled: true })
        .expect(200);
      expect(res.body).toMatchObject({
        enabled: true,
        metadata_url: idp.metadataUrl,
        idp_entity_id: idp.entityId,
        idp_sso_url: idp.ssoUrl,
        idp_certificates: 1,
      });
      const [entry] = (await t.ds.query(
        `SELECT actor, metadata FROM audit_log WHERE action = 'tenant.update' AND tenant_id = $1`,
        [owner.tenantId],
      )) as { actor: string; metadata: { changed: string[] } }[];
      expect(entry.actor).toBe(`user:${owner.userId}`);
      expect(entry.metadata.changed).toEqual(
        expect.arrayContaining(['saml_enabled', 'saml_metadata_url', 'saml_entity_id', 'saml_return_paths']),
      );

      const start = await t.http().get(new URL(res.body.login_url as string).pathname + '?RelayState=%2Fapp%2F');
      expect(start.status).toBe(302);
      const seen = TestIdp.readAuthnRequest(new URL(start.headers.location as string))!;
      expect(seen.relayState).toBe('/app/');
      const email = uniqueEmail('sso');
      const acs = await t
        .http()
        .post(`/saml/${owner.slug}/acs`)
        .type('form')
        .send({
          SAMLResponse: idp.signedResponse({
            inResponseTo: seen.id,
            destination: res.body.acs_url as string,
            audience: res.body.sp_entity_id as string,
            email,
          }),
          RelayState: '/app/',
        })
        .expect(303);
      expect(acs.headers.location).toMatch(new RegExp(`^${BASE}/app/#access_token=`));

      // Turning it off keeps the metadata; the login route is gone.
      const off = await t.http().put('/v1/account/sso').set(bearer(ownerTokens)).send({ enabled: false }).expect(200);
      expect(off.body).toMatchObject({ enabled: false, metadata_url: idp.metadataUrl, idp_certificates: 1 });
      await t.http().get(`/saml/${owner.slug}/login`).expect(404);
    });
  });
});
