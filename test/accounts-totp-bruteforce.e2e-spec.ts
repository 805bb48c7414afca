import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { bearer, login, mailTo, PASSWORD, register, totpCode, type Account } from './helpers/accounts.js';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';

/** A 6-digit code that is not the current one (nor one step either side). */
async function wrongCode(secret: string): Promise<string> {
  const near = new Set([await totpCode(secret, -1), await totpCode(secret), await totpCode(secret, 1)]);
  for (let n = 0; ; n++) {
    const code = String(n).padStart(6, '0');
    if (!near.has(code)) return code;
  }
}

describe('managed /v1: guessing a second factor or a password', () => {
  let t: TestApp;
  let smtp: SmtpSink;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await startApp({
      env: {
        DEPLOYMENT_MODE: 'managed',
        SMTP_URL: smtp.url,
        AUTH_FAILURE_LIMIT: '100000',
        AUTH_ROUTE_LIMIT_PER_ADDRESS: '100000',
        // Short backoffs so ten wrong codes take seconds here (production: from 1 s, doubling).
        TOTP_BACKOFF_BASE_MS: '20',
        TOTP_BACKOFF_MAX_MS: '200',
        TOTP_LOCK_AFTER: '10',
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  /** An account with TOTP on: its secret and recovery codes. */
  async function withTotp(): Promise<Account & { secret: string; recovery: string[] }> {
    const account = await register(t);
    const tokens = await login(t, account.email);
    const setup = await t.http().post('/v1/auth/totp/setup').set(bearer(tokens)).expect(200);
    const secret = setup.body.secret as string;
    const enabled = await t
      .http()
      .post('/v1/auth/totp/enable')
      .set(bearer(tokens))
      .send({ code: await totpCode(secret) })
      .expect(200);
    return { ...account, secret, recovery: enabled.body.recovery_codes as string[] };
  }
  const ticketOf = async (email: string) =>
    (await t.http().post('/v1/auth/login').send({ email, password: PASSWORD }).expect(200)).body
      .session_token as string;
  const validate = (session_token: string, code: string) =>
    t.http().post('/v1/auth/totp/validate').send({ session_token, code });
  const failedChecks = async (userId: string) =>
    Number(
      (
        await t.ds.query(
          `SELECT count(*) AS n FROM audit_log WHERE action = 'login.totp_failed' AND resource_id = $1`,
          [userId],
        )
      )[0].n,
    );

  it('60 concurrent wrong codes on one ticket: at most 5 are checked, the rest refused unheard', async () => {
    const account = await withTotp();
    const ticket = await ticketOf(account.email);
    const code = await wrongCode(account.secret);
    const answers = await Promise.all(Array.from({ length: 60 }, () => validate(ticket, code)));
    expect(answers.every((a) => a.status === 401 || a.status === 429)).toBe(true);
    expect(await failedChecks(account.userId)).toBeLessThanOrEqual(5);
    // The ticket is spent: even the right code is refused on it now.
    expect((await validate(ticket, await totpCode(account.secret))).status).toBe(401);
  });

  it('wrong codes across 10 fresh logins lock the second factor; audited, mailed, and a recovery code lifts it', async () => {
    const account = await withTotp();
    const code = await wrongCode(account.secret);
    const statuses: number[] = [];
    for (let login = 0; login < 10; login++) {
      const ticket = await ticketOf(account.email);
      for (;;) {
        const res = await validate(ticket, code);
        if (res.status !== 429) {
          statuses.push(res.status);
          break;
        }
        // The backoff between tries: wait as told, then try again on the same ticket.
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    expect(statuses.slice(0, 9)).toEqual(Array(9).fill(401));
    expect(statuses[9]).toBe(403);

    // Locked: the right code is refused, on a fresh login too.
    const locked = await validate(await ticketOf(account.email), await totpCode(account.secret));
    expect(locked.status).toBe(403);
    expect(locked.body.error.code).toBe('TOTP_LOCKED');
    const [row] = await t.ds.query(`SELECT totp_locked_at FROM users WHERE id = $1`, [account.userId]);
    expect(row.totp_locked_at).not.toBeNull();
    const lockEntries = await t.ds.query(
      `SELECT metadata FROM audit_log WHERE action = 'totp.locked' AND resource_id = $1`,
      [account.userId],
    );
    expect(lockEntries).toHaveLength(1);
    const mail = await mailTo(smtp, account.email, 2);
    expect(mail.subject).toMatch(/locked/i);
    expect(mail.text).toMatch(/recovery code/);

    // A recovery code signs in and lifts the lock; the app's codes work again afterwards.
    const viaRecovery = await validate(await ticketOf(account.email), account.recovery[0]!).expect(200);
    expect(viaRecovery.body.access_token).toEqual(expect.any(String));
    const [after] = await t.ds.query(`SELECT totp_locked_at FROM users WHERE id = $1`, [account.userId]);
    expect(after.totp_locked_at).toBeNull();
    expect(
      await t.ds.query(`SELECT 1 FROM audit_log WHERE action = 'totp.unlocked' AND resource_id = $1`, [account.userId]),
    ).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 250));
    await validate(await ticketOf(account.email), await totpCode(account.secret, 1)).expect(200);
  }, 60_000);

  it('guessing the current password on PATCH /v1/account/profile is throttled like a login', async () => {
    const account = await register(t);
    const tokens = await login(t, account.email);
    const change = (current: string) =>
      t
        .http()
        .patch('/v1/account/profile')
        .set(bearer(tokens))
        .send({ current_password: current, new_password: 'another long unusual passphrase 7' });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await change(`wrong guess ${i}`)).status);
    // LOGIN_FAILURE_LIMIT_PER_ACCOUNT (5) wrong guesses, then 429 before the password is looked at: the
    // right one is refused too until the window ends.
    expect(statuses).toEqual([400, 400, 400, 400, 400, 429, 429]);
    const right = await change(PASSWORD);
    expect(right.status).toBe(429);
    expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('public /v1/auth routes are throttled per client address', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({
      env: { DEPLOYMENT_MODE: 'managed', AUTH_FAILURE_LIMIT: '100000', AUTH_ROUTE_LIMIT_PER_ADDRESS: '3' },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  const routes: [string, object][] = [
    ['/v1/auth/register', { email: 'a@example.com', password: 'x', organization: 'O', slug: 'o' }],
    ['/v1/auth/login', { email: 'nobody@example.com', password: 'wrong password here' }],
    ['/v1/auth/totp/validate', { session_token: 'not-a-ticket', code: '123456' }],
    ['/v1/auth/accept-invitation', { token: 'not-a-token', password: 'x' }],
  ];

  for (const [path, body] of routes) {
    it(`${path}: the 4th request from one address within the window is 429 with Retry-After`, async () => {
      for (let i = 0; i < 3; i++) expect((await t.http().post(path).send(body)).status).not.toBe(429);
      const fourth = await t.http().post(path).send(body);
      expect(fourth.status).toBe(429);
      expect(fourth.body.error.code).toBe('RATE_LIMITED');
      expect(Number(fourth.headers['retry-after'])).toBeGreaterThan(0);
    });
  }
});
