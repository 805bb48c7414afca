import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, login, mailTo, register, type Account, type Tokens } from './helpers/accounts.js';
import { startApp, type TestApp } from './helpers/app.js';
import { startSmtpSink, tokenFromMail, type SmtpSink } from './helpers/smtp.js';

/** The portal's requests in one pass: the organisation, the profile, sessions, documents, keys, usage. */
const PAGE_CALLS = [
  '/v1/account/organization',
  '/v1/account/profile',
  '/v1/auth/sessions',
  '/list',
  '/v1/api-keys',
  '/v1/billing/plan',
  '/tenant',
];

interface Org {
  owner: Account;
  tokens: Tokens;
  apiKey: string;
}

describe("the portal's own pages (a user's session) are held to a per-user limit, not the organisation's budget", () => {
  let smtp: SmtpSink;
  // `a` runs the default session limit; `b`, an instance on the same database and Redis, a tiny one (5 at
  // once, one a minute) to show the bound.
  let a: TestApp;
  let b: TestApp;

  /** A Free-plan organisation whose owner verified the address, signed in, and made an API key. */
  async function freeOrg(): Promise<Org> {
    const owner = await register(a, { keepPlan: true });
    await a
      .http()
      .post('/v1/auth/verify-email')
      .send({ token: tokenFromMail(await mailTo(smtp, owner.email)) })
      .expect(200);
    const tokens = await login(a, owner.email);
    const key = await a.http().post('/v1/api-keys').set(bearer(tokens)).send({ name: 'ERP' }).expect(201);
    return { owner, tokens, apiKey: key.body.key as string };
  }

  async function apiCalls(t: TestApp, org: Org): Promise<number> {
    // Read with the session: the usage route is never counted, and a session is not metered either.
    const res = await t.http().get('/v1/billing/usage').set(bearer(org.tokens)).expect(200);
    return res.body.api_calls as number;
  }

  beforeAll(async () => {
    smtp = await startSmtpSink();
    a = await startApp({ env: { DEPLOYMENT_MODE: 'managed', SMTP_URL: smtp.url, USAGE_FLUSH_INTERVAL_MS: '3600000' } });
    b = await startApp({
      env: {
        DEPLOYMENT_MODE: 'managed',
        SMTP_URL: smtp.url,
        USAGE_FLUSH_INTERVAL_MS: '3600000',
        SESSION_RATE_LIMIT_BURST: '5',
        SESSION_RATE_LIMIT_RPM: '1',
      },
      shareWith: a,
    });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await smtp?.close();
  });

  it("a Free organisation's session makes more requests than the plan's 20 a minute: no 429, no API call counted", async () => {
    const org = await freeOrg();
    const plan = await a.http().get('/v1/billing/plan').set(bearer(org.tokens)).expect(200);
    expect(plan.body).toMatchObject({ plan: 'free', rpm: 20 });
    const before = await apiCalls(a, org);

    // 45 requests in well under a minute: however they fall across the organisation's fixed windows, one
    // window would hold more than 20 of them if they were counted there.
    const statuses: number[] = [];
    let last: { headers: Record<string, string> } | undefined;
    for (let i = 0; i < 45; i++) {
      const res = await a
        .http()
        .get(PAGE_CALLS[i % PAGE_CALLS.length])
        .set(bearer(org.tokens));
      statuses.push(res.status);
      last = res;
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    // The headers tell the session's own bucket (60 at once by default), not the plan's 20.
    expect(last?.headers['x-ratelimit-limit']).toBe('60');
    expect(Number(last?.headers['x-ratelimit-remaining'])).toBeLessThan(60);
    expect(await apiCalls(a, org)).toBe(before);
    expect((await a.http().get('/v1/billing/usage').set('X-API-Key', org.apiKey).expect(200)).body.api_calls).toBe(
      before,
    );
  });

  it("an API key and a program's tenant token on the same organisation are still counted and held to the plan; the session goes on meanwhile", async () => {
    const org = await freeOrg();
    const before = await apiCalls(a, org);
    const first = await a.http().get('/list').set('X-API-Key', org.apiKey).expect(200);
    expect(first.headers['x-ratelimit-limit']).toBe('20');
    await a.http().get('/tenant').set('X-API-Key', org.apiKey).expect(200);
    // A tenant token made for a program names no session: metered like the key.
    const program = a.tenantToken(org.owner.tenantId, 'service');
    const res = await a.http().get('/list').set('Authorization', `Bearer ${program}`).expect(200);
    expect(res.headers['x-ratelimit-limit']).toBe('20');
    expect(await apiCalls(a, org)).toBe(before + 3);

    // 45 more: however the fixed windows fall, one of them holds more than 20 and refuses the rest.
    const refused: { status: number; code?: string; retryAfter?: string }[] = [];
    for (let i = 0; i < 45; i++) {
      const answer = await a.http().get('/tenant').set('X-API-Key', org.apiKey);
      if (answer.status !== 200) {
        refused.push({
          status: answer.status,
          code: answer.body.error?.code,
          retryAfter: answer.headers['retry-after'],
        });
      }
    }
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfter: expect.stringMatching(/^\d+$/) });
    // The person is not locked out of their own portal by their program's traffic.
    for (const path of PAGE_CALLS) await a.http().get(path).set(bearer(org.tokens)).expect(200);
  });

  it("the per-user session limit answers 429 beyond its bound, with Retry-After, audited once, and spends no other tenant's budget", async () => {
    const orgA = await freeOrg();
    const orgB = await freeOrg();
    const callsB = await apiCalls(a, orgB);

    // On `b` the bucket holds 5 and refills one a minute: the sixth request within the minute is refused.
    const statuses: number[] = [];
    let refusal: { body: { error: { code: string; message: string } }; headers: Record<string, string> } | undefined;
    for (let i = 0; i < 8; i++) {
      const res = await b
        .http()
        .get(PAGE_CALLS[i % PAGE_CALLS.length])
        .set(bearer(orgA.tokens));
      statuses.push(res.status);
      if (res.status === 429) refusal ??= res;
    }
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
    expect(refusal?.body.error.code).toBe('RATE_LIMITED');
    expect(refusal?.body.error.message).toMatch(/signed-in sessions: 5 at once, then 1 a minute/);
    expect(Number(refusal?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refusal?.headers['x-ratelimit-limit']).toBe('5');
    expect(refusal?.headers['x-ratelimit-remaining']).toBe('0');
    const audited = (await a.ds.query(
      `SELECT actor, metadata FROM audit_log WHERE tenant_id = $1 AND action = 'rate_limit.exceeded'`,
      [orgA.owner.tenantId],
    )) as { actor: string; metadata: Record<string, unknown> }[];
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({ actor: `user:${orgA.owner.userId}`, metadata: { scope: 'session', limit: 5 } });

    // Tenant A's own API key still has the plan's whole minute: the session spent none of it.
    const keyA = await b.http().get('/tenant').set('X-API-Key', orgA.apiKey).expect(200);
    expect(keyA.headers['x-ratelimit-limit']).toBe('20');
    expect(keyA.headers['x-ratelimit-remaining']).toBe('19');

    // Tenant B's session has its whole bucket, its key its whole minute, and its usage did not move.
    const sessionB = await b.http().get('/list').set(bearer(orgB.tokens)).expect(200);
    expect(sessionB.headers['x-ratelimit-remaining']).toBe('4');
    const keyB = await b.http().get('/tenant').set('X-API-Key', orgB.apiKey).expect(200);
    expect(keyB.headers['x-ratelimit-remaining']).toBe('19');
    expect(await apiCalls(a, orgB)).toBe(callsB + 1);
  });
});
