import type { Response } from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { bearer, login, mailTo, registerVerified, uniqueEmail, type Account, type Tokens } from './helpers/accounts.js';
import { startSmtpSink, tokenFromMail, type SmtpSink } from './helpers/smtp.js';

interface Entry {
  id: string;
  action: string;
  actor: string;
  created_at: string;
}

/** Seeds entries by SQL: three share each timestamp (the id breaks the tie), spread an hour apart. */
async function seed(t: TestApp, tenantId: string, count: number, ownerId: string): Promise<void> {
  await t.ds.query(
    `INSERT INTO audit_log (tenant_id, action, actor, resource_id, created_at)
     SELECT $1, CASE WHEN i % 2 = 0 THEN 'seed.a' ELSE 'seed.b' END,
            CASE WHEN i % 3 = 0 THEN 'api_key:sdf_kABC' ELSE 'user:' || $3 END,
            'r' || i, now() - interval '1 day' - (i / 3) * interval '1 hour'
       FROM generate_series(1, $2) AS i`,
    [tenantId, count, ownerId],
  );
}

describe('managed GET /v1/audit: filters, cursor paging, tenant scope, roles', () => {
  let t: TestApp;
  let smtp: SmtpSink;
  let owner: Account;
  let tokens: Tokens;
  let expected: Entry[];

  const page = (query: Record<string, string | number | undefined>) =>
    t.http().get('/v1/audit').query(query).set(bearer(tokens));

  async function walk(limit?: number): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let n = 0; n < 100; n++) {
      const res: Response = await page({ limit, cursor: cursor ?? undefined }).expect(200);
      expect(res.body.entries.length).toBeLessThanOrEqual(limit ?? 50);
      ids.push(...res.body.entries.map((e: Entry) => e.id));
      expect(res.body.has_more).toBe(res.body.next_cursor !== null);
      if (!res.body.has_more) return ids;
      cursor = res.body.next_cursor;
    }
    throw new Error('paging did not end');
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
    tokens = await login(t, owner.email);
    const other = await registerVerified(t, smtp);
    await seed(t, owner.tenantId, 250, owner.userId);
    await seed(t, other.tenantId, 60, other.userId);
    expected = (await t.ds.query(
      `SELECT id, action, actor, created_at FROM audit_log WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC`,
      [owner.tenantId],
    )) as Entry[];
    expect(expected.length).toBeGreaterThanOrEqual(250);
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('pages through every entry once, in order, at the default size (50) and at 200', async () => {
    const first = await page({}).expect(200);
    expect(first.body.entries).toHaveLength(50);
    expect(first.body.entries[0]).toEqual({
      id: expect.any(String),
      action: expect.any(String),
      action_label: expect.any(String),
      actor: expect.any(String),
      actor_display: {
        kind: expect.any(String),
        name: expect.any(String),
        email: expect.toBeOneOf([expect.any(String), null]),
        key_prefix: expect.toBeOneOf([expect.any(String), null]),
      },
      document: null,
      resource_id: expect.toBeOneOf([expect.any(String), null]),
      ip_address: expect.toBeOneOf([expect.any(String), null]),
      metadata: expect.any(Object),
      created_at: expect.any(String),
    });
    const ids = expected.map((e) => e.id);
    expect(await walk()).toEqual(ids);
    expect(await walk(200)).toEqual(ids);
  });

  it('each filter narrows correctly', async () => {
    const check = async (query: Record<string, string>, keep: (e: Entry) => boolean) => {
      const want = expected.filter(keep).map((e) => e.id);
      expect(want.length).toBeGreaterThan(0);
      const res = await page({ ...query, limit: 200 }).expect(200);
      expect(
        res.body.entries.map((e: Entry) => e.id),
        JSON.stringify(query),
      ).toEqual(want.slice(0, 200));
    };
    await check({ action: 'seed.a' }, (e) => e.action === 'seed.a');
    await check({ action: 'login' }, (e) => e.action === 'login');
    await check({ actor: owner.userId }, (e) => e.actor === `user:${owner.userId}`);
    await check({ actor: 'sdf_kABC' }, (e) => e.actor === 'api_key:sdf_kABC');
    await check({ actor: 'api_key:sdf_kABC' }, (e) => e.actor === 'api_key:sdf_kABC');
    const from = new Date(Date.now() - 2 * 86_400_000);
    const to = new Date(Date.now() - 1.5 * 86_400_000);
    await check({ from: from.toISOString(), to: to.toISOString() }, (e) => {
      const at = new Date(e.created_at).getTime();
      return at >= from.getTime() && at < to.getTime();
    });
    await check(
      { action: 'seed.b', actor: 'sdf_kABC', from: from.toISOString() },
      (e) => e.action === 'seed.b' && e.actor === 'api_key:sdf_kABC' && new Date(e.created_at) >= from,
    );
    const none = await page({ action: 'no.such.action' }).expect(200);
    expect(none.body).toEqual({ entries: [], next_cursor: null, has_more: false });
  });

  it("another tenant's entries never appear", async () => {
    const mine = new Set(expected.map((e) => e.id));
    const res = await page({ limit: 200, actor: 'sdf_kABC' }).expect(200);
    for (const e of res.body.entries as Entry[]) expect(mine.has(e.id)).toBe(true);
    expect((await walk(200)).every((id) => mine.has(id))).toBe(true);
  });

  it('limit over 200, a tampered cursor and bad dates are 400', async () => {
    for (const query of [{ limit: 201 }, { limit: 0 }, { limit: 'x' }, { from: 'yesterday' }]) {
      const res = await page(query).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    const next = (await page({ limit: 10 }).expect(200)).body.next_cursor as string;
    const [payload, mac] = next.split('.');
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { u: string; id: string };
    const forged = Buffer.from(JSON.stringify({ ...decoded, u: String(BigInt(decoded.u) - 1n) })).toString('base64url');
    for (const cursor of [`${forged}.${mac}`, next.slice(0, -2), 'not-a-cursor']) {
      const res = await page({ cursor }).expect(400);
      expect(res.body.error.details[0].path).toBe('/cursor');
    }
    await page({ from: new Date().toISOString(), to: new Date(Date.now() - 1000).toISOString() }).expect(400);
  });

  it('a member gets 403; state changes made through /v1 show up with the user id as actor', async () => {
    const email = uniqueEmail('member');
    await t.http().post('/v1/account/team/invitations').set(bearer(tokens)).send({ email, role: 'member' }).expect(201);
    const token = tokenFromMail(await mailTo(smtp, email));
    const joined = await t
      .http()
      .post('/v1/auth/accept-invitation')
      .send({ token, password: 'member passphrase 2026 xyz' })
      .expect(201);
    const member = await login(t, email, 'member passphrase 2026 xyz');
    const res = await t.http().get('/v1/audit').set(bearer(member)).expect(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    const invites = await page({ action: 'team.invite', actor: owner.userId }).expect(200);
    expect(invites.body.entries).toHaveLength(1);
    const join = await page({ actor: joined.body.user.id }).expect(200);
    expect(join.body.entries.map((e: Entry) => e.action)).toEqual(['login', 'team.join']);
  });
});
