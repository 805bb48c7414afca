import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { bearer, login, mailTo, registerVerified, uniqueEmail, type Account, type Tokens } from './helpers/accounts.js';
import { startSmtpSink, tokenFromMail, type SmtpSink } from './helpers/smtp.js';

const PASSWORD = 'a member passphrase long enough 9';

describe('managed /v1 invitations: one membership per acceptance, listed, resent, cancelled', () => {
  let t: TestApp;
  let smtp: SmtpSink;
  let owner: Account;
  let ownerTokens: Tokens;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await startApp({
      env: { DEPLOYMENT_MODE: 'managed', SMTP_URL: smtp.url, AUTH_FAILURE_LIMIT: '100000' },
    });
    owner = await registerVerified(t, smtp);
    ownerTokens = await login(t, owner.email);
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  const invite = (tokens: Tokens, email: string, role: 'admin' | 'member' = 'member') =>
    t.http().post('/v1/account/team/invitations').set(bearer(tokens)).send({ email, role });
  const accept = (token: string) => t.http().post('/v1/auth/accept-invitation').send({ token, password: PASSWORD });
  const open = async () =>
    (await t.http().get('/v1/account/team/invitations').set(bearer(ownerTokens)).expect(200)).body as {
      id: string;
      email: string;
      invited_by: string | null;
    }[];
  const actions = async (action: string) =>
    (await t.ds.query(`SELECT resource_id FROM audit_log WHERE tenant_id = $1 AND action = $2`, [
      owner.tenantId,
      action,
    ])) as { resource_id: string }[];

  it('a removed member cannot rejoin with a second invitation sent before the first was accepted', async () => {
    const email = uniqueEmail('twice');
    await invite(ownerTokens, email).expect(201);
    await invite(ownerTokens, email).expect(201);
    const first = tokenFromMail(await mailTo(smtp, email, 1));
    const second = tokenFromMail(await mailTo(smtp, email, 2));
    const joined = await accept(first).expect(201);
    expect(await open()).toEqual([]);
    await t.http().delete(`/v1/account/team/${joined.body.user.id}`).set(bearer(ownerTokens)).expect(204);

    const again = await accept(second).expect(410);
    expect(again.body.error.code).toBe('INVITATION_GONE');
    expect(again.body.error.details).toEqual([{ path: '/token', message: 'no longer valid' }]);
    const team = await t.http().get('/v1/account/team').set(bearer(ownerTokens)).expect(200);
    expect(team.body.members.map((m: { email: string }) => m.email)).not.toContain(email);
    // An unknown token is still a malformed request, not a gone one.
    await accept('not-a-token-at-all').expect(400);
  });

  it('lists open invitations with who sent them; resend mails a new link and kills the old; cancel kills it', async () => {
    const email = uniqueEmail('resent');
    const sent = await invite(ownerTokens, email).expect(201);
    expect(sent.body.invited_by).toBe(owner.userId);
    expect(await open()).toEqual([expect.objectContaining({ id: sent.body.id, email, invited_by: owner.userId })]);

    const resent = await t
      .http()
      .post(`/v1/account/team/invitations/${sent.body.id}/resend`)
      .set(bearer(ownerTokens))
      .expect(201);
    expect(resent.body.id).not.toBe(sent.body.id);
    expect((await open()).map((i) => i.id)).toEqual([resent.body.id]);
    const oldLink = tokenFromMail(await mailTo(smtp, email, 1));
    const newLink = tokenFromMail(await mailTo(smtp, email, 2));
    expect(newLink).not.toBe(oldLink);
    await accept(oldLink).expect(410);

    await t.http().delete(`/v1/account/team/invitations/${resent.body.id}`).set(bearer(ownerTokens)).expect(204);
    expect(await open()).toEqual([]);
    await accept(newLink).expect(410);
    // Cancelled already, unknown, or another organization's: 404 alike.
    await t.http().delete(`/v1/account/team/invitations/${resent.body.id}`).set(bearer(ownerTokens)).expect(404);
    await t.http().post(`/v1/account/team/invitations/${resent.body.id}/resend`).set(bearer(ownerTokens)).expect(404);
    const other = await registerVerified(t, smtp);
    const otherTokens = await login(t, other.email);
    const theirs = await invite(otherTokens, uniqueEmail('theirs')).expect(201);
    await t.http().delete(`/v1/account/team/invitations/${theirs.body.id}`).set(bearer(ownerTokens)).expect(404);

    expect((await actions('team.invitation_resend')).map((a) => a.resource_id)).toEqual([resent.body.id]);
    expect((await actions('team.invitation_cancel')).map((a) => a.resource_id)).toEqual([resent.body.id]);
  });

  it("a removed member's open invitations, and those they sent, are gone", async () => {
    // An admin joins and invites someone; then the admin is invited again (by the owner) and removed.
    const adminEmail = uniqueEmail('admin');
    await invite(ownerTokens, adminEmail, 'admin').expect(201);
    const admin = await accept(tokenFromMail(await mailTo(smtp, adminEmail, 1))).expect(201);
    const adminTokens = await login(t, adminEmail, PASSWORD);
    const guest = uniqueEmail('guest');
    await invite(adminTokens, guest).expect(201);
    expect((await open()).map((i) => i.email)).toEqual([guest]);

    await t.http().delete(`/v1/account/team/${admin.body.user.id}`).set(bearer(ownerTokens)).expect(204);
    expect(await open()).toEqual([]);
    await accept(tokenFromMail(await mailTo(smtp, guest, 1))).expect(410);

    // Members cannot see or change invitations.
    const memberEmail = uniqueEmail('member');
    await invite(ownerTokens, memberEmail).expect(201);
    await accept(tokenFromMail(await mailTo(smtp, memberEmail, 1))).expect(201);
    const memberTokens = await login(t, memberEmail, PASSWORD);
    await t.http().get('/v1/account/team/invitations').set(bearer(memberTokens)).expect(403);
  });
});
