import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { bearer, login, register, type Tokens } from './helpers/accounts.js';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';

const MANAGED = (smtp: SmtpSink) => ({ DEPLOYMENT_MODE: 'managed', SMTP_URL: smtp.url });

/** The cookie renewal of the pages at /app/ with this refresh token in the cookie. */
function cookieRefresh(t: TestApp, refreshToken: string) {
  return t
    .http()
    .post('/v1/auth/session/refresh')
    .set('Cookie', `sdf_refresh=${encodeURIComponent(refreshToken)}`)
    .set('X-SDF-Session', '1')
    .send({});
}

function cookieOf(res: { headers: Record<string, unknown> }): string {
  const match = /sdf_refresh=([^;]*)/.exec(String(res.headers['set-cookie']));
  return decodeURIComponent(match?.[1] ?? '');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("managed /v1: the web front end's cookie renewal repeated after a page was left mid-renewal", () => {
  let smtp: SmtpSink;
  // A window far longer than any test step, and one short enough to wait out.
  let wide: TestApp;
  let narrow: TestApp;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    wide = await startApp({ env: { ...MANAGED(smtp), SESSION_REFRESH_REPEAT_MS: '60000' } });
    narrow = await startApp({ env: { ...MANAGED(smtp), SESSION_REFRESH_REPEAT_MS: '300' }, shareWith: wide });
  });
  afterAll(async () => {
    await narrow?.close();
    await wide?.close();
    await smtp?.close();
  });

  async function activeSessions(t: TestApp, tokens: { access_token: string }): Promise<number> {
    const res = await t.http().get('/v1/auth/sessions').set(bearer(tokens)).expect(200);
    return (res.body.data as unknown[]).length;
  }

  it('the same token twice within the window: both renew, to the same successor, and no session ends', async () => {
    const account = await register(wide);
    const other = await login(wide, account.email);
    const first = await login(wide, account.email);
    const a = await cookieRefresh(wide, first.refresh_token).expect(200);
    const b = await cookieRefresh(wide, first.refresh_token).expect(200);
    expect(cookieOf(a)).not.toBe(first.refresh_token);
    expect(cookieOf(b)).toBe(cookieOf(a));
    // Both access tokens work; so does the user's other session; the successor rotates on as usual.
    await wide
      .http()
      .get('/tenant')
      .set(bearer(a.body as Tokens))
      .expect(200);
    await wide
      .http()
      .get('/tenant')
      .set(bearer(b.body as Tokens))
      .expect(200);
    await wide.http().get('/tenant').set(bearer(other)).expect(200);
    // The rotated session's own access token lasts out the window: another tab's request sent with it is answered.
    await wide.http().get('/tenant').set(bearer(first)).expect(200);
    const c = await cookieRefresh(wide, cookieOf(b)).expect(200);
    await wide
      .http()
      .get('/tenant')
      .set(bearer(c.body as Tokens))
      .expect(200);
    expect(await activeSessions(wide, c.body as Tokens)).toBe(2);
    const audit = await wide.ds.query(`SELECT action FROM audit_log WHERE tenant_id = $1 AND action LIKE 'session.%'`, [
      account.tenantId,
    ]);
    expect(audit.map((r: { action: string }) => r.action).sort()).toEqual([
      'session.refresh',
      'session.refresh',
      'session.refresh_repeat',
    ]);
  });

  it('several at once with one token: all renew and the family stays alive', async () => {
    const account = await register(wide);
    const tokens = await login(wide, account.email);
    const results = await Promise.all([0, 1, 2].map(() => cookieRefresh(wide, tokens.refresh_token)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(new Set(results.map(cookieOf)).size).toBe(1);
    await cookieRefresh(wide, cookieOf(results[0])).expect(200);
  });

  it('a token two rotations back, even within the window, is a reuse: every session ends', async () => {
    const account = await register(wide);
    const other = await login(wide, account.email);
    const first = await login(wide, account.email);
    const second = cookieOf(await cookieRefresh(wide, first.refresh_token).expect(200));
    const third = await cookieRefresh(wide, second).expect(200);
    await cookieRefresh(wide, first.refresh_token).expect(401);
    await wide
      .http()
      .get('/tenant')
      .set(bearer(third.body as Tokens))
      .expect(401);
    await wide.http().get('/tenant').set(bearer(other)).expect(401);
    // The reuse ends the rotated sessions' access tokens at once too, window or not.
    await wide.http().get('/tenant').set(bearer(first)).expect(401);
    await cookieRefresh(wide, cookieOf(third)).expect(401);
  });

  it('the previous token replayed after the window: every session of the user ends, as before', async () => {
    const account = await register(narrow);
    const other = await login(narrow, account.email);
    const first = await login(narrow, account.email);
    const renewed = await cookieRefresh(narrow, first.refresh_token).expect(200);
    await sleep(1000);
    // Past the window, the rotated session's access token is refused.
    await narrow.http().get('/tenant').set(bearer(first)).expect(401);
    const replay = await cookieRefresh(narrow, first.refresh_token).expect(401);
    expect(String(replay.headers['set-cookie'])).toMatch(/sdf_refresh=;.*Max-Age=0/);
    await narrow
      .http()
      .get('/tenant')
      .set(bearer(renewed.body as Tokens))
      .expect(401);
    await narrow.http().get('/tenant').set(bearer(other)).expect(401);
    const audit = await narrow.ds.query(`SELECT metadata FROM audit_log WHERE tenant_id = $1 AND action = $2`, [
      account.tenantId,
      'session.refresh_reuse',
    ]);
    expect(audit.map((r: { metadata: { sessions_revoked: number } }) => r.metadata.sessions_revoked)).toEqual([2]);
    await cookieRefresh(narrow, cookieOf(renewed)).expect(401);
  });

  it('the JSON refresh keeps no window: a token presented twice there is a reuse at once', async () => {
    const account = await register(wide);
    const tokens = await login(wide, account.email);
    const rotated = await wide
      .http()
      .post('/v1/auth/refresh')
      .send({ refresh_token: tokens.refresh_token })
      .expect(200);
    // Without a window the rotated session's access token ends with the rotation.
    await wide.http().get('/tenant').set(bearer(tokens)).expect(401);
    await wide.http().post('/v1/auth/refresh').send({ refresh_token: tokens.refresh_token }).expect(401);
    await wide
      .http()
      .get('/tenant')
      .set(bearer(rotated.body as Tokens))
      .expect(401);
  });
});
