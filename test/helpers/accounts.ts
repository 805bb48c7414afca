import { randomBytes } from 'node:crypto';
import { generate } from 'otplib';
import type { TestApp } from './app.js';
import { tokenFromMail, type SmtpSink } from './smtp.js';
import { waitUntil } from './wait.js';

export const PASSWORD = 'a long unusual passphrase 42';

export interface Account {
  userId: string;
  tenantId: string;
  email: string;
  slug: string;
  password: string;
}

export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomBytes(5).toString('hex')}@example.test`;
}

/**
 * Registers an organization and its owner through the API. Unless `keepPlan`, an operator then moves it
 * to Enterprise with a high rate limit, so that a test's requests are not throttled by Free's 20 a minute.
 */
export async function register(
  t: TestApp,
  input: Partial<{ email: string; slug: string; keepPlan: boolean }> = {},
): Promise<Account> {
  const email = input.email ?? uniqueEmail('owner');
  const slug = input.slug ?? `org-${randomBytes(5).toString('hex')}`;
  await t
    .http()
    .post('/v1/auth/register')
    .send({ email, password: PASSWORD, organization: `Org ${slug}`, slug })
    .expect(202, { email: email.toLowerCase() });
  // The answer names no id (it is the same for an address that has an account): the database does.
  const [row] = (await t.ds.query(`SELECT id, tenant_id FROM users WHERE lower(email) = lower($1)`, [email])) as {
    id: string;
    tenant_id: string;
  }[];
  if (!input.keepPlan) {
    await t
      .http()
      .patch(`/admin/tenants/${row.tenant_id}`)
      .set('Authorization', `Bearer ${t.adminToken()}`)
      .send({ plan: 'enterprise', limits: { rpm: 100_000 } })
      .expect(200);
  }
  return { userId: row.id, tenantId: row.tenant_id, email, slug, password: PASSWORD };
}

/** Waits for the mail to `to` (the n-th one, counting from 1) and returns it. */
export function mailTo(smtp: SmtpSink, to: string, nth = 1) {
  return waitUntil(() => smtp.mails.filter((m) => m.to === to.toLowerCase())[nth - 1], `mail ${nth} to ${to}`, 30_000);
}

/** Registers and verifies the address through the mailed link. */
export async function registerVerified(
  t: TestApp,
  smtp: SmtpSink,
  input: Partial<{ email: string; slug: string }> = {},
) {
  const account = await register(t, input);
  const mail = await mailTo(smtp, account.email);
  await t
    .http()
    .post('/v1/auth/verify-email')
    .send({ token: tokenFromMail(mail) })
    .expect(200);
  return account;
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

export async function login(t: TestApp, email: string, password = PASSWORD): Promise<Tokens> {
  const res = await t.http().post('/v1/auth/login').send({ email, password }).expect(200);
  return res.body as Tokens;
}

export const bearer = (tokens: { access_token: string }) => ({ Authorization: `Bearer ${tokens.access_token}` });

/** The TOTP code of a time step (`offset` steps away from now), computed as an authenticator app would. */
export function totpCode(secret: string, offsetSteps = 0): Promise<string> {
  return generate({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSteps * 30 });
}

export function decodeJwt(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** Every row of every table of the app's database, as text, that contains one of `secrets`. */
export async function rowsContaining(t: TestApp, secrets: string[]): Promise<string[]> {
  const tables = (await t.ds.query(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
  )) as { table_name: string }[];
  const found: string[] = [];
  for (const { table_name } of tables) {
    const rows = (await t.ds.query(`SELECT t::text AS row FROM "${table_name}" t`)) as { row: string }[];
    for (const { row } of rows) {
      for (const secret of secrets) if (row.includes(secret)) found.push(`${table_name}: ${secret}`);
    }
  }
  return found;
}
