import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import {
  bearer,
  login,
  mailTo,
  PASSWORD,
  register,
  registerVerified,
  rowsContaining,
  uniqueEmail,
  type Account,
  type Tokens,
} from './helpers/accounts.js';
import { upload } from './helpers/documents.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { startSmtpSink, tokenFromMail, type SmtpSink } from './helpers/smtp.js';

const MEMBER_PASSWORD = 'member passphrase 2026 xyz';

describe('managed /v1 account: organization, profile, team, invitations, ownership, portal API keys', () => {
  let t: TestApp;
  let smtp: SmtpSink;
  let owner: Account;
  let ownerTokens: Tokens;
  let member: { id: string; email: string; tokens: Tokens };
  const inviteTokens: string[] = [];

  /** Invites `email` as `role`, accepts through the mailed link, and logs the new user in. */
  async function join(role: 'admin' | 'member') {
    const email = uniqueEmail(role);
    const invited = await t
      .http()
      .post('/v1/account/team/invitations')
      .set(bearer(ownerTokens))
      .send({ email, role })
      .expect(201);
    expect(invited.body).toMatchObject({ email, role, expires_at: expect.any(String) });
    const mail = await mailTo(smtp, email);
    expect(mail.subject).toContain('invited');
    const token = tokenFromMail(mail);
    inviteTokens.push(token);
    const accepted = await t
      .http()
      .post('/v1/auth/accept-invitation')
      .send({ token, password: MEMBER_PASSWORD })
      .expect(201);
    expect(accepted.body.user).toMatchObject({ email, role });
    expect(accepted.body.organization.id).toBe(owner.tenantId);
    await t.http().post('/v1/auth/accept-invitation').send({ token, password: MEMBER_PASSWORD }).expect(410);
    return { id: accepted.body.user.id as string, email, tokens: await login(t, email, MEMBER_PASSWORD) };
  }

  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await startApp({
      env: {
        DEPLOYMENT_MODE: 'managed',
        SMTP_URL: smtp.url,
        AUTH_FAILURE_LIMIT: '100000',
        RATE_LIMIT_DEFAULT_RPM: '10000',
      },
    });
    owner = await registerVerified(t, smtp);
    ownerTokens = await login(t, owner.email);
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('organization: read by anyone signed in, renamed by the owner; profile reads the user', async () => {
    const org = await t.http().get('/v1/account/organization').set(bearer(ownerTokens)).expect(200);
    expect(org.body).toEqual({
      id: owner.tenantId,
      name: `Org ${owner.slug}`,
      slug: owner.slug,
      plan: 'free',
      created_at: expect.any(String),
    });
    const renamed = await t
      .http()
      .patch('/v1/account/organization')
      .set(bearer(ownerTokens))
      .send({ name: 'Renamed GmbH' })
      .expect(200);
    expect(renamed.body.name).toBe('Renamed GmbH');
    const profile = await t.http().get('/v1/account/profile').set(bearer(ownerTokens)).expect(200);
    expect(profile.body).toMatchObject({ id: owner.userId, email: owner.email, role: 'owner', email_verified: true });
    expect(JSON.stringify(profile.body)).not.toMatch(/hash|secret/);
  });

  it('an unverified owner may read but not create API keys or invite (403 EMAIL_NOT_VERIFIED)', async () => {
    const fresh = await register(t);
    const tokens = await login(t, fresh.email);
    await t.http().get('/v1/account/team').set(bearer(tokens)).expect(200);
    const key = await t.http().post('/v1/api-keys').set(bearer(tokens)).send({ name: 'k' }).expect(403);
    expect(key.body.error.code).toBe('EMAIL_NOT_VERIFIED');
    const inv = await t
      .http()
      .post('/v1/account/team/invitations')
      .set(bearer(tokens))
      .send({ email: uniqueEmail(), role: 'member' })
      .expect(403);
    expect(inv.body.error.code).toBe('EMAIL_NOT_VERIFIED');
  });

  it('invite -> mail -> accept -> listed in the team', async () => {
    member = await join('member');
    const team = await t.http().get('/v1/account/team').set(bearer(ownerTokens)).expect(200);
    expect(team.body.members).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: owner.userId, role: 'owner' }),
        expect.objectContaining({ id: member.id, email: member.email, role: 'member', email_verified: true }),
      ]),
    );
    const dup = await t
      .http()
      .post('/v1/account/team/invitations')
      .set(bearer(ownerTokens))
      .send({ email: member.email, role: 'member' })
      .expect(409);
    expect(dup.body.error.code).toBe('CONFLICT');
  });

  it('a member gets 403 on team management, invitations and API keys', async () => {
    const h = bearer(member.tokens);
    for (const res of [
      await t.http().post('/v1/account/team/invitations').set(h).send({ email: uniqueEmail(), role: 'member' }),
      await t.http().get('/v1/account/team').set(h),
      await t.http().patch(`/v1/account/team/${owner.userId}`).set(h).send({ role: 'member' }),
      await t.http().get('/v1/api-keys').set(h),
      await t.http().post('/v1/api-keys').set(h).send({ name: 'mine' }),
      await t.http().patch('/v1/account/organization').set(h).send({ name: 'Hijacked' }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    }
    await t.http().get('/v1/account/organization').set(h).expect(200);
  });

  it('demoting or removing the only owner is 409', async () => {
    const demote = await t
      .http()
      .patch(`/v1/account/team/${owner.userId}`)
      .set(bearer(ownerTokens))
      .send({ role: 'admin' })
      .expect(409);
    expect(demote.body.error.code).toBe('CONFLICT');
    await t.http().delete(`/v1/account/team/${owner.userId}`).set(bearer(ownerTokens)).expect(409);
    await t.http().patch(`/v1/account/team/${member.id}`).set(bearer(ownerTokens)).send({ role: 'owner' }).expect(400);
  });

  it('removing a member ends their sessions at once', async () => {
    const other = await join('member');
    const second = await login(t, other.email, MEMBER_PASSWORD);
    await t.http().get('/v1/account/profile').set(bearer(other.tokens)).expect(200);
    await t.http().delete(`/v1/account/team/${other.id}`).set(bearer(ownerTokens)).expect(204);
    await t.http().get('/v1/account/profile').set(bearer(other.tokens)).expect(401);
    await t.http().get('/tenant').set(bearer(second)).expect(401);
    await t.http().post('/v1/auth/refresh').send({ refresh_token: second.refresh_token }).expect(401);
    await t.http().post('/v1/auth/login').send({ email: other.email, password: MEMBER_PASSWORD }).expect(401);
  });

  it('ownership transfer: the target becomes owner, the former owner admin; always exactly one owner', async () => {
    const admin = await join('admin');
    await t
      .http()
      .post('/v1/account/team/transfer-ownership')
      .set(bearer(admin.tokens))
      .send({ user_id: admin.id })
      .expect(403);
    const res = await t
      .http()
      .post('/v1/account/team/transfer-ownership')
      .set(bearer(ownerTokens))
      .send({ user_id: admin.id })
      .expect(200);
    expect(res.body).toMatchObject({ id: admin.id, role: 'owner' });
    const owners = await t.ds.query(`SELECT id, role FROM users WHERE tenant_id = $1 AND role = 'owner'`, [
      owner.tenantId,
    ]);
    expect(owners).toEqual([{ id: admin.id, role: 'owner' }]);
    // And back, so the rest of the file keeps its owner.
    await t
      .http()
      .post('/v1/account/team/transfer-ownership')
      .set(bearer(admin.tokens))
      .send({ user_id: owner.userId })
      .expect(200);
  });

  it('an address with an account in another organization is answered as a new one; its mail says why it cannot join', async () => {
    const elsewhere = await registerVerified(t, smtp);
    const fresh = uniqueEmail('fresh');
    const answers = [];
    for (const email of [elsewhere.email, fresh]) {
      const res = await t
        .http()
        .post('/v1/account/team/invitations')
        .set(bearer(ownerTokens))
        .send({ email, role: 'member' })
        .expect(201);
      answers.push(Object.keys(res.body as object).sort());
      expect(res.body).toMatchObject({ email, role: 'member' });
    }
    // Nothing in the answer tells the two apart, and both are listed as open.
    expect(answers[0]).toEqual(answers[1]);
    const open = await t.http().get('/v1/account/team/invitations').set(bearer(ownerTokens)).expect(200);
    const emails = (open.body as { email: string }[]).map((i) => i.email);
    expect(emails).toEqual(expect.arrayContaining([elsewhere.email, fresh]));

    // The new address gets its link; the account holder a note with no link to accept.
    expect(tokenFromMail(await mailTo(smtp, fresh))).toEqual(expect.any(String));
    // Its first mail was the verification of its own sign-up.
    const note = await mailTo(smtp, elsewhere.email, 2);
    expect(note.subject).toContain('invited');
    expect(note.text).toContain('already has an SDF account in another organization');
    expect(note.text).not.toContain('accept-invitation');
    expect(note.html).not.toContain('accept-invitation');
    // The account holder's organization is unchanged.
    const rows = (await t.ds.query(`SELECT tenant_id FROM users WHERE lower(email) = $1`, [elsewhere.email])) as {
      tenant_id: string;
    }[];
    expect(rows).toEqual([{ tenant_id: elsewhere.tenantId }]);
  });

  it('a password change needs the current password and ends the other sessions', async () => {
    const account = await registerVerified(t, smtp);
    const a = await login(t, account.email);
    const b = await login(t, account.email);
    await t
      .http()
      .patch('/v1/account/profile')
      .set(bearer(a))
      .send({ current_password: 'not it at all', new_password: 'another long passphrase 7' })
      .expect(400);
    await t
      .http()
      .patch('/v1/account/profile')
      .set(bearer(a))
      .send({ current_password: PASSWORD, new_password: 'another long passphrase 7' })
      .expect(200);
    await t.http().get('/v1/account/profile').set(bearer(a)).expect(200);
    await t.http().get('/v1/account/profile').set(bearer(b)).expect(401);
    await t.http().post('/v1/auth/refresh').send({ refresh_token: b.refresh_token }).expect(401);
    await login(t, account.email, 'another long passphrase 7');
  });

  it('a portal API key works on /upload and is 401 once revoked; another tenant cannot revoke it', async () => {
    const created = await t.http().post('/v1/api-keys').set(bearer(ownerTokens)).send({ name: 'ERP' }).expect(201);
    expect(created.body).toMatchObject({ key: expect.stringMatching(/^sdf_k/), name: 'ERP' });
    const listed = await t.http().get('/v1/api-keys').set(bearer(ownerTokens)).expect(200);
    expect(listed.body.keys.map((k: { id: string }) => k.id)).toContain(created.body.id);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);
    const { archive } = await buildSdf();
    await upload(t, created.body.key, archive).expect(201);

    const stranger = await registerVerified(t, smtp);
    const strangerTokens = await login(t, stranger.email);
    await t.http().delete(`/v1/api-keys/${created.body.id}`).set(bearer(strangerTokens)).expect(404);
    await upload(t, created.body.key, archive).expect(201);

    await t.http().delete(`/v1/api-keys/${created.body.id}`).set(bearer(ownerTokens)).expect(204);
    await upload(t, created.body.key, archive).expect(401);
    const audit = await t.ds.query(
      `SELECT action, actor FROM audit_log WHERE tenant_id = $1 AND action LIKE 'api_key.%' ORDER BY created_at`,
      [owner.tenantId],
    );
    expect(audit).toEqual([
      { action: 'api_key.create', actor: `user:${owner.userId}` },
      { action: 'api_key.revoke', actor: `user:${owner.userId}` },
    ]);
  });

  it('every state change above is audited with the user as actor; no invitation token in clear', async () => {
    const rows = (await t.ds.query(`SELECT action, actor FROM audit_log WHERE tenant_id = $1`, [owner.tenantId])) as {
      action: string;
      actor: string;
    }[];
    const actions = new Set(rows.map((r) => r.action));
    for (const a of [
      'organization.update',
      'team.invite',
      'team.join',
      'team.remove',
      'team.ownership_transfer',
      'api_key.create',
      'api_key.revoke',
    ]) {
      expect(actions.has(a), a).toBe(true);
    }
    const accountRows = rows.filter((r) => /^(organization|team|api_key|profile)\./.test(r.action));
    expect(accountRows.every((r) => r.actor.startsWith('user:'))).toBe(true);
    expect(inviteTokens.length).toBeGreaterThan(2);
    expect(await rowsContaining(t, [...inviteTokens, MEMBER_PASSWORD])).toEqual([]);
  });
});
