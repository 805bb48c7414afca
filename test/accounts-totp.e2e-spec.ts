import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import {
  bearer,
  login,
  mailTo,
  PASSWORD,
  register,
  rowsContaining,
  totpCode,
  type Account,
  type Tokens,
} from './helpers/accounts.js';
import { startSmtpSink, tokenFromMail, type SmtpSink } from './helpers/smtp.js';

describe('managed /v1 TOTP: setup, enable, login with a code, replay and drift, recovery codes', () => {
  let t: TestApp;
  let smtp: SmtpSink;
  let account: Account;
  let tokens: Tokens;
  let secret: string;
  let recovery: string[];
  const secrets: string[] = [];

  const loginTicket = async () => {
    const res = await t.http().post('/v1/auth/login').send({ email: account.email, password: PASSWORD }).expect(200);
    expect(res.body).toEqual({ totp_required: true, session_token: expect.any(String) });
    return res.body.session_token as string;
  };
  const validate = (session_token: string, code: string) =>
    t.http().post('/v1/auth/totp/validate').send({ session_token, code });

  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await startApp({ env: { DEPLOYMENT_MODE: 'managed', SMTP_URL: smtp.url, AUTH_FAILURE_LIMIT: '100000' } });
    account = await register(t);
    secrets.push(tokenFromMail(await mailTo(smtp, account.email)));
    tokens = await login(t, account.email);
    secrets.push(tokens.refresh_token, PASSWORD);
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('setup answers the secret, an otpauth URL and the QR code as SVG; TOTP is not on yet', async () => {
    const res = await t.http().post('/v1/auth/totp/setup').set(bearer(tokens)).expect(200);
    secret = res.body.secret;
    expect(secret).toMatch(/^[A-Z2-7]+=*$/);
    expect(res.body.otpauth_url).toMatch(/^otpauth:\/\/totp\/.*secret=/);
    expect(res.body.qr_svg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
    await login(t, account.email);
  });

  it('enable needs a right code and answers ten recovery codes', async () => {
    const wrong = String((Number(await totpCode(secret)) + 1) % 1_000_000).padStart(6, '0');
    await t.http().post('/v1/auth/totp/enable').set(bearer(tokens)).send({ code: wrong }).expect(401);
    const res = await t
      .http()
      .post('/v1/auth/totp/enable')
      .set(bearer(tokens))
      .send({ code: await totpCode(secret) })
      .expect(200);
    recovery = res.body.recovery_codes;
    expect(recovery).toHaveLength(10);
    expect(new Set(recovery).size).toBe(10);
    secrets.push(secret, ...recovery);
  });

  it('login then asks for a code; validate gives tokens; the same code again is 401', async () => {
    const code = await totpCode(secret, 1);
    const ok = await validate(await loginTicket(), code).expect(200);
    expect(ok.body).toMatchObject({
      access_token: expect.any(String),
      refresh_token: expect.any(String),
      expires_in: 900,
    });
    secrets.push(ok.body.refresh_token);
    await t
      .http()
      .get('/tenant')
      .set(bearer(ok.body as Tokens))
      .expect(200);
    const replay = await validate(await loginTicket(), code).expect(401);
    expect(replay.body.error.code).toBe('UNAUTHORIZED');
  });

  it('a code two steps old is 401, one step of drift passes', async () => {
    // Move the last used step far back so only the drift window decides.
    await t.ds.query(`UPDATE users SET totp_last_step = totp_last_step - 100 WHERE id = $1`, [account.userId]);
    const ticket = await loginTicket();
    await validate(ticket, await totpCode(secret, -2)).expect(401);
    await validate(ticket, await totpCode(secret, 1)).expect(200);
  });

  it('a session token is single use', async () => {
    await t.ds.query(`UPDATE users SET totp_last_step = totp_last_step - 100 WHERE id = $1`, [account.userId]);
    const ticket = await loginTicket();
    await validate(ticket, await totpCode(secret, 1)).expect(200);
    await validate(ticket, recovery[9]).expect(401);
  });

  it('a recovery code works once in place of a code', async () => {
    await validate(await loginTicket(), recovery[0]).expect(200);
    await validate(await loginTicket(), recovery[0]).expect(401);
    await validate(await loginTicket(), recovery[1].toUpperCase()).expect(200);
  });

  it('the audit log has the logins and the TOTP changes, with the user as actor', async () => {
    // The operator's plan change made by the test set-up is the one entry of another actor.
    const rows = (await t.ds.query(
      `SELECT action, actor FROM audit_log WHERE tenant_id = $1 AND actor NOT LIKE 'admin:%'`,
      [account.tenantId],
    )) as {
      action: string;
      actor: string;
    }[];
    const actions = new Set(rows.map((r) => r.action));
    for (const a of ['totp.setup', 'totp.enable', 'login.totp_required', 'login', 'login.totp_failed']) {
      expect(actions.has(a), a).toBe(true);
    }
    expect(rows.every((r) => r.actor === `user:${account.userId}`)).toBe(true);
  });

  it('no password, TOTP secret, refresh token, recovery code or mail token stands in clear in any table', async () => {
    const users = await t.ds.query(`SELECT password_hash, totp_secret FROM users WHERE id = $1`, [account.userId]);
    expect(users[0].password_hash).toMatch(/^\$argon2id\$/);
    expect(users[0].totp_secret).toMatch(/^v[A-Za-z0-9]+\./);
    expect(secrets.length).toBeGreaterThanOrEqual(15);
    expect(await rowsContaining(t, secrets)).toEqual([]);
  });

  it('disable needs a code; login then gives tokens directly', async () => {
    await t.http().post('/v1/auth/totp/disable').set(bearer(tokens)).send({ code: '000000x' }).expect(401);
    await t.http().post('/v1/auth/totp/disable').set(bearer(tokens)).send({ code: recovery[2] }).expect(204);
    const res = await login(t, account.email);
    expect(res.access_token).toEqual(expect.any(String));
    const codes = await t.ds.query(`SELECT count(*)::int AS n FROM totp_recovery_codes WHERE user_id = $1`, [
      account.userId,
    ]);
    expect(codes[0].n).toBe(0);
  });
});
