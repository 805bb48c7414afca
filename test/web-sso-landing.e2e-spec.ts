import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { bearer, login, registerVerified, uniqueEmail, type Account } from './helpers/accounts.js';
import { accessibilityProblems, launchBrowser, openProbe, type PageProbe } from './helpers/browser.js';
import { TestIdp, closedPort } from './helpers/saml-idp.js';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';

/**
 * Tokens in the address of a portal page: a link can carry someone else's (a login CSRF), so the portal
 * takes them only on the single sign-on landing, only for a sign-in this tab started, and never replaces a
 * session without asking. In Chromium, against the real service and the SAML test identity provider.
 */
describe('the portal takes sign-in tokens from its address only for a sign-in it started', () => {
  let t: TestApp;
  let smtp: SmtpSink;
  let idp: TestIdp;
  let base: string;
  let browser: Browser;
  let owner: Account;
  let other: Account;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    idp = await TestIdp.start();
    const port = await closedPort();
    base = `http://127.0.0.1:${port}`;
    t = await startApp({
      env: {
        DEPLOYMENT_MODE: 'managed',
        PUBLIC_BASE_URL: base,
        SMTP_URL: smtp.url,
        // The test identity provider's metadata is on loopback, which the address guard refuses by default.
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        SAML_METADATA_REFRESH_MINUTES: '0',
      },
    });
    await t.app.listen(port, '127.0.0.1');
    owner = await registerVerified(t, smtp);
    other = await registerVerified(t, smtp);
    await t
      .http()
      .put('/v1/account/sso')
      .set(bearer(await login(t, owner.email)))
      .send({ metadata_url: idp.metadataUrl, enabled: true })
      .expect(200);
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await idp?.close();
    await smtp?.close();
  });

  async function signIn(page: Page, email: string): Promise<void> {
    await page.goto(`${base}/app/sign-in`);
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Documents' }).waitFor();
  }

  /**
   * Whom the portal shows as signed in, from the profile page. The page in front renews its session from
   * the cookie as it loads; that is awaited, so each step starts from a settled session.
   */
  async function signedInAs(page: Page): Promise<string> {
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.goto(`${base}/app/profile`);
    const facts = page.getByTestId('profile-facts');
    await facts.waitFor();
    return (await facts.textContent()) ?? '';
  }

  /** Starts single sign-on from the sign-in page and signs in at the identity provider as `email`. */
  async function ssoAt(page: Page, email: string): Promise<void> {
    await page.goto(`${base}/app/sign-in`);
    await page.getByLabel('Organisation short name').fill(owner.slug);
    await page.getByRole('button', { name: 'Continue to your identity provider' }).click();
    await page.waitForURL((url) => url.href.startsWith(idp.ssoUrl));
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  /** The landing address of a real single sign-on, caught before its page could use it (another browser's). */
  async function foreignLanding(email: string): Promise<string> {
    const probe = await openProbe(browser);
    try {
      let caught: string | null = null;
      // The identity provider's form posts to the service, whose answer redirects to the landing.
      await probe.page.route(`${base}/saml/${owner.slug}/acs`, async (route) => {
        const answer = await route.fetch({ maxRedirects: 0 });
        caught = answer.headers()['location'] ?? null;
        await route.abort();
      });
      await ssoAt(probe.page, email).catch(() => undefined);
      await expect.poll(() => caught, { timeout: 20_000 }).not.toBeNull();
      return caught!;
    } finally {
      await probe.close();
    }
  }

  const sentToken = (probe: PageProbe, token: string) =>
    probe.requests.filter((r) => (r.postData() ?? '').includes(token) || r.url().includes(token));

  it("a signed-in person who opens a link with another account's tokens stays signed in as themselves", async () => {
    const attacker = await login(t, other.email);
    const probe = await openProbe(browser);
    try {
      await signIn(probe.page, owner.email);
      const fragment = `#access_token=${attacker.access_token}&refresh_token=${attacker.refresh_token}&expires_in=900`;
      for (const path of ['/app/', '/app/documents', '/app/sso', `/app/sso?org=${owner.slug}&state=0123456789abcdef`]) {
        await probe.page.goto(`${base}${path}${fragment}`);
        // The tokens leave the address bar at once, used or not.
        await expect.poll(() => probe.page.evaluate('location.hash')).toBe('');
        if (path.startsWith('/app/sso')) await probe.page.getByTestId('sso-refused').waitFor();
        const shown = await signedInAs(probe.page);
        expect(shown).toContain(owner.email);
        expect(shown).not.toContain(other.email);
      }
      // The other account's refresh token never left the page, and still works for its owner.
      expect(sentToken(probe, attacker.refresh_token)).toEqual([]);
      await t.http().post('/v1/auth/refresh').send({ refresh_token: attacker.refresh_token }).expect(200);
      expect(probe.problems).toEqual([]);
    } finally {
      await probe.close();
    }
  }, 120_000);

  it('the landing signs in after a sign-in this browser started, and refuses one started elsewhere', async () => {
    // Started here: signed in as the person who signed in at the identity provider.
    const probe = await openProbe(browser);
    try {
      await ssoAt(probe.page, owner.email);
      await probe.page.waitForURL(`${base}/app/`);
      expect(await probe.page.evaluate('location.hash')).toBe('');
      expect(await signedInAs(probe.page)).toContain(owner.email);
    } finally {
      await probe.close();
    }

    // Started in another browser: the same kind of landing address, signed and fresh, is not used here.
    const victim = await openProbe(browser);
    try {
      const landing = await foreignLanding(uniqueEmail('sso-attacker'));
      expect(landing).toMatch(new RegExp(`^${base}/app/sso\\?org=${owner.slug}&state=[0-9a-f]{32}#access_token=`));
      const refresh = new URLSearchParams(new URL(landing).hash.slice(1)).get('refresh_token')!;
      await victim.page.goto(landing);
      await victim.page.getByTestId('sso-refused').waitFor();
      expect(await victim.page.evaluate('location.hash')).toBe('');
      expect(await accessibilityProblems(victim.page)).toEqual([]);
      await victim.page.goto(`${base}/app/profile`);
      await victim.page.getByRole('heading', { name: 'Sign in to continue' }).waitFor();
      expect(sentToken(victim, refresh)).toEqual([]);

      // Signed in, the same link leaves the session as it is.
      await signIn(victim.page, owner.email);
      await victim.page.goto(await foreignLanding(uniqueEmail('sso-attacker')));
      await victim.page.getByTestId('sso-refused').getByText('You are still signed in as before.').waitFor();
      expect(await signedInAs(victim.page)).toContain(owner.email);
    } finally {
      await victim.close();
    }
  }, 120_000);

  it('a signed-in person who signs in as someone else through single sign-on is asked before the switch', async () => {
    const colleague = uniqueEmail('sso-colleague');
    const probe = await openProbe(browser);
    try {
      await signIn(probe.page, owner.email);
      await ssoAt(probe.page, colleague);
      const question = probe.page.getByTestId('sso-switch-question');
      await expect.poll(() => question.textContent(), { timeout: 20_000 }).toContain(`Switch to ${colleague}?`);
      expect(await question.textContent()).toContain(`You are signed in as ${owner.email}`);
      expect(await accessibilityProblems(probe.page)).toEqual([]);
      await probe.page.getByRole('button', { name: `Stay signed in as ${owner.email}` }).click();
      await probe.page.waitForURL(`${base}/app/`);
      expect(await signedInAs(probe.page)).toContain(owner.email);

      await ssoAt(probe.page, colleague);
      await probe.page.getByRole('button', { name: `Switch to ${colleague}` }).click();
      await probe.page.waitForURL(`${base}/app/`);
      const shown = await signedInAs(probe.page);
      expect(shown).toContain(colleague);
      expect(shown).not.toContain(owner.email);
      expect(probe.problems).toEqual([]);
    } finally {
      await probe.close();
    }
  }, 120_000);
});
