import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { mailTo, PASSWORD, register } from './helpers/accounts.js';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';

const PORTAL = 'https://sdf.example.test';

/** Headers that differ between any two answers (a clock, a request id, a body's tag). */
const VARYING = new Set(['date', 'x-request-id', 'etag']);

/** Addresses of one length, so that two answers naming them have bodies of one length too. */
const address = (label: string) => `${label}-${randomBytes(5).toString('hex')}@example.test`;
const slug = () => `k-${randomBytes(6).toString('hex')}`;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2;
};

/** A known address's case mixed up: Known-ABC@Example.TEST. */
const mixedCase = (email: string) => [...email].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');

describe('managed sign-up with an address that already has an account', () => {
  let t: TestApp;
  let smtp: SmtpSink;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await startApp({
      env: {
        DEPLOYMENT_MODE: 'managed',
        SMTP_URL: smtp.url,
        EMAIL_RETRY_BASE_DELAY_MS: '200',
        PUBLIC_BASE_URL: PORTAL,
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  const signUp = (email: string, orgSlug = slug()) =>
    t.http().post('/v1/auth/register').send({ email, password: PASSWORD, organization: 'Org', slug: orgSlug });

  it('answers exactly as for a new address, creates nothing, and mails the owner a sign-in link', async () => {
    const owner = await register(t, { email: address('known') });
    const fresh = address('fresh');
    const taken = mixedCase(owner.email);
    expect(taken).not.toBe(owner.email);
    const newSlug = slug();

    const forNew = await signUp(fresh);
    const forKnown = await signUp(taken, newSlug);

    expect(forKnown.status).toBe(202);
    expect(forNew.status).toBe(202);
    expect(forKnown.body).toEqual({ email: owner.email });
    expect(forNew.body).toEqual({ email: fresh });
    const same = (h: Record<string, string>) =>
      Object.fromEntries(Object.entries(h).filter(([name]) => !VARYING.has(name)));
    expect(Object.keys(forKnown.headers).sort()).toEqual(Object.keys(forNew.headers).sort());
    expect(same(forKnown.headers as Record<string, string>)).toEqual(same(forNew.headers as Record<string, string>));
    expect(forKnown.headers['content-length']).toBe(forNew.headers['content-length']);

    // Nothing of the attempt is kept: no organization with the new slug, no second user, no new key.
    expect(await t.ds.query(`SELECT id FROM tenants WHERE slug = $1`, [newSlug])).toEqual([]);
    expect(await t.ds.query(`SELECT id FROM users WHERE lower(email) = $1`, [owner.email])).toEqual([
      { id: owner.userId },
    ]);
    // The slug was not left held either: someone else can take it.
    await signUp(address('later'), newSlug).expect(202);

    // The owner hears of it (their first mail is the verification one), with links to sign in and reset.
    const note = await mailTo(smtp, owner.email, 2);
    expect(note.subject).toBe('Someone tried to sign up with your address');
    expect(note.text).toContain(`${PORTAL}/app/sign-in`);
    expect(note.text).toContain(`${PORTAL}/app/forgot-password`);
    expect(smtp.mails.filter((m) => m.to === owner.email).map((m) => m.subject)).toEqual([
      'Confirm your email address',
      'Someone tried to sign up with your address',
    ]);
    const audit = await t.ds.query(
      `SELECT action, actor, metadata FROM audit_log WHERE tenant_id = $1 AND action = $2`,
      [owner.tenantId, 'account.register_existing'],
    );
    expect(audit).toEqual([{ action: 'account.register_existing', actor: 'anonymous', metadata: { slug: newSlug } }]);

    // A taken slug is refused alike for both addresses: slugs are public, addresses are not.
    const slugForNew = await signUp(address('other'), owner.slug).expect(409);
    const slugForKnown = await signUp(taken, owner.slug).expect(409);
    expect(slugForKnown.body).toEqual(slugForNew.body);
  });

  it('takes as long as a new sign-up: medians of 50 each within 10%', { timeout: 300_000 }, async () => {
    const known: string[] = [];
    for (let i = 0; i < 51; i++) {
      const email = address('timed');
      await signUp(email).expect(202);
      known.push(mixedCase(email));
    }
    const timed = async (email: string) => {
      const start = performance.now();
      await signUp(email).expect(202);
      return performance.now() - start;
    };
    // Warm both paths, then alternate so that load on the machine falls on both alike.
    await timed(address('warm'));
    await timed(known[50]);
    const forKnown: number[] = [];
    const forNew: number[] = [];
    for (let i = 0; i < 50; i++) {
      forNew.push(await timed(address('fresh')));
      forKnown.push(await timed(known[i]));
    }
    const [k, n] = [median(forKnown), median(forNew)];
    expect(Math.abs(k - n) / Math.max(k, n), `median ${k.toFixed(1)} ms known, ${n.toFixed(1)} ms new`).toBeLessThan(
      0.1,
    );
  });
});
