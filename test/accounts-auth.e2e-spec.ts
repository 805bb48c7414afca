import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import {
  bearer,
  decodeJwt,
  login,
  mailTo,
  PASSWORD,
  register,
  registerVerified,
  uniqueEmail,
  type Tokens,
} from './helpers/accounts.js';
import { startSmtpSink, tokenFromMail, type SmtpSink } from './helpers/smtp.js';
import { waitUntil } from './helpers/wait.js';

const MANAGED = (smtp: SmtpSink) => ({
  DEPLOYMENT_MODE: 'managed',
  SMTP_URL: smtp.url,
  EMAIL_RETRY_BASE_DELAY_MS: '200',
  LOGIN_FAILURE_LIMIT_PER_ACCOUNT: '3',
  LOGIN_FAILURE_LIMIT_PER_ADDRESS: '1000',
  AUTH_FAILURE_LIMIT: '100000',
});

describe('managed /v1 auth: register, verification mail, login, tokens, refresh, logout', () => {
  let t: TestApp;
  let smtp: SmtpSink;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await startApp({ env: MANAGED(smtp) });
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('register: 202 naming only the address; the organization and owner exist; the mailed link verifies once', async () => {
    const email = uniqueEmail('Owner');
    const slug = `acme-${Date.now().toString(36)}`;
    const res = await t
      .http()
      .post('/v1/auth/register')
      .send({ email, password: PASSWORD, organization: 'Acme GmbH', slug })
      .expect(202);
    expect(res.body).toEqual({ email: email.toLowerCase() });
    const [user] = await t.ds.query(
      `SELECT u.id, u.tenant_id, u.role, t.name, t.slug FROM users u JOIN tenants t ON t.id = u.tenant_id
        WHERE u.email = $1`,
      [email.toLowerCase()],
    );
    expect(user).toMatchObject({ role: 'owner', name: 'Acme GmbH', slug });
    const mail = await mailTo(smtp, email);
    expect(mail.subject).toMatch(/confirm/i);
    const token = tokenFromMail(mail);
    await t.http().post('/v1/auth/verify-email').send({ token }).expect(200, { email_verified: true });
    const again = await t.http().post('/v1/auth/verify-email').send({ token }).expect(400);
    expect(again.body.error.code).toBe('VALIDATION_ERROR');
    const row = await t.ds.query(`SELECT email_verified FROM users WHERE id = $1`, [user.id]);
    expect(row[0].email_verified).toBe(true);
    const audit = await t.ds.query(`SELECT action, actor FROM audit_log WHERE tenant_id = $1 ORDER BY created_at`, [
      user.tenant_id,
    ]);
    expect(audit).toEqual(
      expect.arrayContaining([
        { action: 'account.register', actor: `user:${user.id}` },
        { action: 'account.email_verified', actor: `user:${user.id}` },
      ]),
    );
  });

  it('register: a duplicate slug is 409 whoever asks; a weak password is 400 with details', async () => {
    const first = await register(t);
    for (const email of [uniqueEmail(), first.email.toUpperCase()]) {
      const dupSlug = await t
        .http()
        .post('/v1/auth/register')
        .send({ email, password: PASSWORD, organization: 'X', slug: first.slug })
        .expect(409);
      expect(dupSlug.body.error).toMatchObject({ code: 'CONFLICT', message: `The slug '${first.slug}' is taken` });
    }
    for (const weak of ['short', 'Password123', 'x'.repeat(257)]) {
      const res = await t
        .http()
        .post('/v1/auth/register')
        .send({ email: uniqueEmail(), password: weak, organization: 'X', slug: `w-${Date.now()}` })
        .expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details).toEqual([{ path: '/password', message: expect.any(String) }]);
    }
  });

  it('register does not wait for the mail server: 202 while SMTP stalls, the mail arrives once it answers', async () => {
    smtp.stall();
    try {
      const account = await register(t);
      // The request has been answered while the server still holds the transaction.
      await waitUntil(() => smtp.stalled() > 0, 'the mail job to reach the stalled server');
      expect(smtp.mails.some((m) => m.to === account.email)).toBe(false);
      smtp.release();
      const mail = await mailTo(smtp, account.email);
      expect(tokenFromMail(mail)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    } finally {
      smtp.release();
    }
  });

  it('login: wrong password and unknown email give identical 401 bodies, and both are audited', async () => {
    const account = await register(t);
    const wrong = await t.http().post('/v1/auth/login').send({ email: account.email, password: 'not the password' });
    const unknown = await t.http().post('/v1/auth/login').send({ email: uniqueEmail(), password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    const audit = await t.ds.query(`SELECT action FROM audit_log WHERE tenant_id = $1 AND action = 'login.failed'`, [
      account.tenantId,
    ]);
    expect(audit).toHaveLength(1);
    await login(t, account.email);
    const ok = await t.ds.query(`SELECT actor FROM audit_log WHERE tenant_id = $1 AND action = 'login'`, [
      account.tenantId,
    ]);
    expect(ok).toEqual([{ actor: `user:${account.userId}` }]);
  });

  it('login throttle: 429 with Retry-After past the per-account limit; another account is unaffected', async () => {
    const a = await register(t);
    const b = await register(t);
    for (let i = 0; i < 3; i++) {
      await t.http().post('/v1/auth/login').send({ email: a.email, password: 'wrong password!' }).expect(401);
    }
    const throttled = await t.http().post('/v1/auth/login').send({ email: a.email, password: PASSWORD }).expect(429);
    expect(throttled.body.error.code).toBe('RATE_LIMITED');
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    await login(t, b.email);
  });

  it('access tokens: claims tenant_id, sub, sid, role; 900 s; accepted by core endpoints', async () => {
    const account = await register(t);
    const tokens = await login(t, account.email);
    expect(tokens.expires_in).toBe(900);
    const claims = decodeJwt(tokens.access_token);
    expect(claims).toMatchObject({ tenant_id: account.tenantId, sub: account.userId, role: 'owner' });
    expect(claims.sid).toEqual(expect.any(String));
    expect((claims.exp as number) - (claims.iat as number)).toBe(900);
    const tenant = await t.http().get('/tenant').set(bearer(tokens)).expect(200);
    expect(tenant.body.id ?? tenant.body.tenant?.id).toBe(account.tenantId);
  });

  it("refresh rotates; the old token is then 401 and ends the user's other session too", async () => {
    const account = await register(t);
    const first = await login(t, account.email);
    const other = await login(t, account.email);
    const rotated = await t.http().post('/v1/auth/refresh').send({ refresh_token: first.refresh_token }).expect(200);
    expect(rotated.body.refresh_token).not.toBe(first.refresh_token);
    expect(rotated.body.expires_in).toBe(900);
    await t
      .http()
      .get('/tenant')
      .set(bearer(rotated.body as Tokens))
      .expect(200);
    await t.http().post('/v1/auth/refresh').send({ refresh_token: first.refresh_token }).expect(401);
    await t.http().post('/v1/auth/refresh').send({ refresh_token: other.refresh_token }).expect(401);
    await t.http().post('/v1/auth/refresh').send({ refresh_token: rotated.body.refresh_token }).expect(401);
    await t.http().get('/tenant').set(bearer(other)).expect(401);
    const audit = await t.ds.query(`SELECT action FROM audit_log WHERE tenant_id = $1 AND action LIKE 'session.%'`, [
      account.tenantId,
    ]);
    // Every revoked token presented again is a reuse: the first one, then the two it ended.
    expect(audit.map((r: { action: string }) => r.action).sort()).toEqual([
      'session.refresh',
      'session.refresh_reuse',
      'session.refresh_reuse',
      'session.refresh_reuse',
    ]);
  });

  it('two concurrent refreshes with one token: exactly one 200 and one 401', async () => {
    const account = await register(t);
    for (let round = 0; round < 3; round++) {
      const tokens = await login(t, account.email);
      const results = await Promise.all(
        [0, 1].map(() => t.http().post('/v1/auth/refresh').send({ refresh_token: tokens.refresh_token })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
    }
  });

  it('logout is 204; its refresh token and its access token are refused right after', async () => {
    const account = await register(t);
    const tokens = await login(t, account.email);
    await t.http().post('/v1/auth/logout').set(bearer(tokens)).expect(204);
    await t.http().post('/v1/auth/refresh').send({ refresh_token: tokens.refresh_token }).expect(401);
    await t.http().get('/tenant').set(bearer(tokens)).expect(401);
  });

  it('verification resend: a new link (the old one dies), then 429 within the minute', async () => {
    const account = await register(t);
    const firstMail = await mailTo(smtp, account.email);
    const tokens = await login(t, account.email);
    await t.http().post('/v1/auth/verify-email/resend').set(bearer(tokens)).expect(204);
    const again = await t.http().post('/v1/auth/verify-email/resend').set(bearer(tokens)).expect(429);
    expect(Number(again.headers['retry-after'])).toBeGreaterThan(0);
    const second = await mailTo(smtp, account.email, 2);
    await t
      .http()
      .post('/v1/auth/verify-email')
      .send({ token: tokenFromMail(firstMail) })
      .expect(400);
    await t
      .http()
      .post('/v1/auth/verify-email')
      .send({ token: tokenFromMail(second) })
      .expect(200);
  });

  it('/v1 user routes refuse API keys and service tokens (403) and need credentials (401)', async () => {
    const account = await registerVerified(t, smtp);
    await t.http().post('/v1/auth/logout').expect(401);
    const service = t.tenantToken(account.tenantId, 'erp-sync', 600);
    const res = await t.http().post('/v1/auth/logout').set('Authorization', `Bearer ${service}`).expect(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });

  it('documents /v1 in /openapi.json with request and response schemas', async () => {
    const doc = (await t.http().get('/openapi.json').expect(200)).body;
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.paths['/v1/auth/register'].post.requestBody).toBeDefined();
    expect(doc.paths['/v1/audit'].get.responses['200'].content['application/json'].schema).toBeDefined();
    expect(doc.paths['/v1/account/team'].get.security).toEqual([{ 'tenant-jwt': [] }]);
    expect(doc.paths['/v1/auth/login'].post.security ?? []).toEqual([]);
    expect(doc.paths['/v1/auth/register'].post.responses['202'].content['application/json'].schema).toBeDefined();
    expect(Object.keys(doc.paths['/v1/auth/register'].post.responses)).not.toContain('201');
    expect(doc.paths['/v1/auth/login'].post).toBeDefined();
  });
});

describe('self-hosted: no /v1, tenant JWTs keep 8 h', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('every /v1 path is 404 and absent from /openapi.json', async () => {
    for (const [method, path] of [
      ['post', '/v1/auth/register'],
      ['post', '/v1/auth/login'],
      ['post', '/v1/auth/refresh'],
      ['post', '/v1/auth/logout'],
      ['get', '/v1/account/organization'],
      ['get', '/v1/account/team'],
      ['get', '/v1/api-keys'],
      ['get', '/v1/audit'],
    ] as const) {
      const res = await t.http()[method](path).send({});
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const doc = (await t.http().get('/openapi.json').expect(200)).body;
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/v1'))).toEqual([]);
  });

  it('a tenant JWT of 8 hours is accepted', async () => {
    expect(t.config.tenantTokenTtlSeconds).toBe(8 * 3600);
    const tenant = await t
      .http()
      .post('/admin/tenants')
      .set('Authorization', `Bearer ${t.adminToken()}`)
      .send({ name: 'Self', slug: `self-${Date.now().toString(36)}` })
      .expect(201);
    const token = t.tenantToken(tenant.body.id, 'user-1', 8 * 3600);
    const claims = decodeJwt(token);
    expect((claims.exp as number) - (claims.iat as number)).toBe(8 * 3600);
    await t.http().get('/tenant').set('Authorization', `Bearer ${token}`).expect(200);
  });
});
