import type { Browser, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { PASSWORD, bearer, login, mailTo, registerVerified, totpCode, uniqueEmail } from './helpers/accounts.js';
import { accessibilityProblems, launchBrowser, listen, mainNavLink, openProbe, screenshot } from './helpers/browser.js';
import { startSmtpSink, tokenFromMail, type SmtpSink } from './helpers/smtp.js';

/** The element that has the focus, as its id (the fields of these pages all have one). */
const focusedId = (page: Page) => page.evaluate<string | null>('document.activeElement?.id ?? null');

/**
 * The portal as a customer meets it, on a desk (1280 px) and a phone (375 px): the second sign-in step,
 * the phone-sized menu, roles and sessions, and what a page says when the service asks to wait or the
 * session ends while a form is being filled.
 */
describe('the portal: second factor, phone menu, team and sessions, waits and an ended session', () => {
  let t: TestApp;
  let smtp: SmtpSink;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await startApp({ env: { DEPLOYMENT_MODE: 'managed', SMTP_URL: smtp.url, AUTH_FAILURE_LIMIT: '100000' } });
    base = await listen(t.app);
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  async function signIn(page: Page, email: string): Promise<void> {
    await page.goto(`${base}/app/sign-in`);
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Documents' }).waitFor();
  }

  it('asks for the second factor alone, focused, with a recovery code and a way back to another account', async () => {
    const owner = await registerVerified(t, smtp);
    const tokens = await login(t, owner.email);
    const setup = await t.http().post('/v1/auth/totp/setup').set(bearer(tokens)).expect(200);
    const secret = setup.body.secret as string;
    const enabled = await t
      .http()
      .post('/v1/auth/totp/enable')
      .set(bearer(tokens))
      .send({ code: await totpCode(secret) })
      .expect(200);
    const recovery = (enabled.body.recovery_codes as string[])[0]!;

    for (const width of [1280, 375]) {
      const probe = await openProbe(browser, { width });
      const { page } = probe;
      try {
        await page.goto(`${base}/app/sign-in`);
        await page.getByLabel('Email address').fill(owner.email);
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        const code = page.getByLabel('Code from your authenticator app');
        await code.waitFor();
        // The step alone, its field focused: no other way in beside it, no password field.
        await expect.poll(() => focusedId(page)).toBe('totp-code');
        expect(await page.getByRole('heading', { name: 'Two-step sign-in' }).count()).toBe(1);
        expect(await page.getByLabel('Organisation short name').count()).toBe(0);
        expect(await page.getByLabel('API key', { exact: true }).count()).toBe(0);
        expect(await page.getByText('New here?').count()).toBe(0);
        expect(await page.getByLabel('Password').count()).toBe(0);
        expect(await accessibilityProblems(page)).toEqual([]);
        await screenshot(page, width === 1280 ? 'portal-sign-in-code' : 'portal-sign-in-code-phone');

        // A recovery code instead: the field says so and keeps the focus.
        await page.getByRole('button', { name: 'Use a recovery code' }).click();
        await page.getByLabel('Recovery code').waitFor();
        await expect.poll(() => focusedId(page)).toBe('totp-code');

        // Back: the address and password form again, the pending sign-in dropped, every way in offered.
        await page.getByRole('button', { name: 'Back' }).click();
        await page.getByLabel('Organisation short name').waitFor();
        expect(await page.getByLabel('Password').inputValue()).toBe('');
        expect(await page.getByLabel('API key', { exact: true }).count()).toBe(1);
        expect(await page.getByText('New here?').count()).toBe(1);
        expect(await page.getByLabel('Code from your authenticator app').count()).toBe(0);

        // In again: at 1280 with a recovery code, at 375 with the app's code.
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await code.waitFor();
        if (width === 1280) {
          await page.getByRole('button', { name: 'Use a recovery code' }).click();
          await page.getByLabel('Recovery code').fill(recovery);
        } else {
          // The next time step's code: the current one was spent enabling TOTP, and a code counts once.
          await code.fill(await totpCode(secret, 1));
        }
        await page.getByRole('button', { name: 'Confirm' }).click();
        await page.getByRole('heading', { name: 'Documents' }).waitFor();
        expect(probe.problems).toEqual([]);
      } finally {
        await probe.close();
      }
    }
  }, 180_000);

  it('a phone-sized header: one menu button with the sections, closed by a navigation and by Escape; the desk shows them all', async () => {
    const owner = await registerVerified(t, smtp);
    const phone = await openProbe(browser, { width: 375 });
    try {
      const { page } = phone;
      await signIn(page, owner.email);
      const header = page.getByRole('banner');
      const menu = header.getByRole('button', { name: 'Menu' });
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      const controlled = (await menu.getAttribute('aria-controls'))!;
      expect(await page.locator(`#${controlled}`).count()).toBe(1);
      const nav = page.getByRole('navigation', { name: 'Main' });
      expect(await nav.getByRole('link', { name: 'Team' }).isVisible()).toBe(false);
      // The header is one row before any content (it took about 190 px in four rows).
      expect((await header.boundingBox())!.height).toBeLessThan(70);
      expect(await accessibilityProblems(page)).toEqual([]);
      await screenshot(page, 'portal-header-phone');

      await menu.click();
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
      for (const name of ['Read a file', 'Documents', 'Team', 'Plan', 'Security']) {
        expect(await nav.getByRole('link', { name, exact: true }).isVisible(), name).toBe(true);
      }
      expect(await header.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
      expect(await accessibilityProblems(page)).toEqual([]);
      await screenshot(page, 'portal-header-phone-menu');

      // A navigation closes it.
      await nav.getByRole('link', { name: 'Team', exact: true }).click();
      await page.getByRole('heading', { name: 'Team', level: 1 }).waitFor();
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await nav.getByRole('link', { name: 'Team' }).isVisible()).toBe(false);

      // Escape closes it and gives the focus back to the button.
      await menu.click();
      await nav.getByRole('link', { name: 'Security', exact: true }).focus();
      await page.keyboard.press('Escape');
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await page.evaluate("document.activeElement?.getAttribute('aria-controls')")).toBe(controlled);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      expect(phone.problems).toEqual([]);
    } finally {
      await phone.close();
    }

    const desk = await openProbe(browser);
    try {
      const { page } = desk;
      await signIn(page, owner.email);
      expect(await page.getByRole('banner').getByRole('button', { name: 'Menu' }).isVisible()).toBe(false);
      const nav = page.getByRole('navigation', { name: 'Main' });
      // The sections of an owner appear once the profile (the role) has come.
      await nav.getByRole('link', { name: 'Team', exact: true }).waitFor();
      for (const name of ['Documents', 'Team', 'Plan', 'Security']) {
        expect(await nav.getByRole('link', { name, exact: true }).isVisible(), name).toBe(true);
      }
      expect(await accessibilityProblems(page)).toEqual([]);
      await screenshot(page, 'portal-header');
    } finally {
      await desk.close();
    }
  }, 180_000);

  it('team and sessions: one name for each role in the form and the table; sessions told apart by address, first and last use, this one marked', async () => {
    const owner = await registerVerified(t, smtp);
    const ownerApi = await login(t, owner.email);
    // A member and an admin, invited and joined through the API.
    for (const role of ['member', 'admin'] as const) {
      const email = uniqueEmail(role);
      await t.http().post('/v1/account/team/invitations').set(bearer(ownerApi)).send({ email, role }).expect(201);
      const token = tokenFromMail(await mailTo(smtp, email));
      await t.http().post('/v1/auth/accept-invitation').send({ token, password: PASSWORD }).expect(201);
    }
    for (const width of [1280, 375]) {
      const probe = await openProbe(browser, { width });
      const { page } = probe;
      try {
        await signIn(page, owner.email);
        await (await mainNavLink(page, 'Team')).click();
        await page.locator(`[data-testid="member-row"][data-email="${owner.email}"]`).waitFor();
        const offered = await page.getByLabel('Role', { exact: true }).locator('option').allTextContents();
        expect(offered).toEqual(['Member', 'Admin']);
        const rows = page.getByTestId('member-row');
        await expect.poll(() => rows.count()).toBe(3);
        // The role column (the third): a choice for the others, plain text for the owner and oneself.
        const shown = new Set<string>();
        for (const row of await rows.all()) {
          const cell = row.locator('td').nth(2);
          const select = cell.getByRole('combobox');
          if (await select.count()) {
            shown.add((await select.locator('option:checked').textContent())!);
            expect(await select.locator('option').allTextContents()).toEqual(offered);
          } else {
            shown.add((await cell.textContent())!.trim());
          }
        }
        expect([...shown].sort()).toEqual(['Admin', 'Member', 'Owner']);
        expect(await page.getByText(/^(owner|admin|member)$/).count()).toBe(0);
        expect(await accessibilityProblems(page)).toEqual([]);
        await screenshot(page, width === 1280 ? 'portal-team-roles' : 'portal-team-roles-phone');

        await (await mainNavLink(page, 'Security')).click();
        const sessions = page.getByTestId('session-row');
        // The test's API login and the sign-ins of the browsers so far: each listed with what tells it apart.
        await expect.poll(() => sessions.count()).toBeGreaterThanOrEqual(2);
        const current = page.locator('[data-testid="session-row"][data-current]');
        expect(await current.count()).toBe(1);
        expect(await current.getByText('This session').count()).toBe(1);
        for (const row of await sessions.all()) {
          const facts = await row.locator('dt').allTextContents();
          expect(facts).toEqual(['Address', 'Signed in', 'Last used']);
          expect(await row.locator('dd').first().textContent()).toMatch(/127\.0\.0\.1|::1/);
        }
        expect(await accessibilityProblems(page)).toEqual([]);
        await screenshot(page, width === 1280 ? 'portal-sessions' : 'portal-sessions-phone');
        expect(probe.problems).toEqual([]);
      } finally {
        await probe.close();
      }
    }
  }, 180_000);

  for (const width of [1280, 375]) {
    it(`429 and 503: the page says why and how long to wait, keeps what was typed, and sends it once the wait is over, at ${width} px`, async () => {
      const owner = await registerVerified(t, smtp);
      const probe = await openProbe(browser, { width });
      const shot = (name: string) => screenshot(page, width === 375 ? `${name}-phone` : name);
      const { page } = probe;
      try {
        await signIn(page, owner.email);
        await (await mainNavLink(page, 'Team')).click();
        await page.getByText('No invitations waiting.').waitFor();
        // The service's own answers, as the rate limit and an outage give them, for the next two sends.
        const refusals = [
          { status: 429, code: 'RATE_LIMITED', message: 'Rate limit of 20 requests per minute exceeded', wait: 6 },
          { status: 503, code: 'SERVICE_UNAVAILABLE', message: 'The database is not reachable', wait: 2 },
        ];
        const invitations = `${base}/v1/account/team/invitations`;
        const refuse = async (route: Route) => {
          const next = route.request().method() === 'POST' ? refusals.shift() : undefined;
          if (!next) return route.fallback();
          await route.fulfill({
            status: next.status,
            headers: { 'Retry-After': String(next.wait), 'Content-Type': 'application/json' },
            body: JSON.stringify({ error: { code: next.code, message: next.message, details: [] } }),
          });
        };
        await page.route(invitations, refuse);
        const email = uniqueEmail(`waited${width}`);
        await page.getByLabel('Email address').fill(email);
        await page.getByRole('button', { name: 'Send invitation' }).click();
        const notice = page.getByTestId('wait-notice');
        await notice.waitFor();
        expect(await notice.getAttribute('data-status')).toBe('429');
        expect(await notice.textContent()).toMatch(
          /Too many requests.*You can try again in [1-6] seconds?\..*What you entered is kept\./,
        );
        expect(await page.getByLabel('Email address').inputValue()).toBe(email);
        const again = notice.getByRole('button', { name: 'Try again' });
        expect(await again.isDisabled()).toBe(true);
        await shot('portal-wait-429');
        expect(await accessibilityProblems(page)).toEqual([]);
        // The wait counted down, the button works, and the next answer is the outage's.
        await expect.poll(() => again.isDisabled(), { timeout: 20_000 }).toBe(false);
        await again.click();
        await expect.poll(() => notice.getAttribute('data-status')).toBe('503');
        expect(await notice.textContent()).toContain('The service is briefly unavailable.');
        expect(await page.getByLabel('Email address').inputValue()).toBe(email);
        await expect
          .poll(() => notice.getByRole('button', { name: 'Try again' }).isDisabled(), { timeout: 10_000 })
          .toBe(false);
        await notice.getByRole('button', { name: 'Try again' }).click();
        await page.getByText(`Invitation sent to ${email}.`).waitFor();
        await mailTo(smtp, email);
        await page.unroute(invitations, refuse);

        // A page's own data refused with 503: the page says it is waiting, not "Loading…" alone.
        let outage = 1;
        await page.route(`${base}/v1/auth/sessions`, async (route) => {
          if (outage-- <= 0) return route.fallback();
          await route.fulfill({
            status: 503,
            headers: { 'Retry-After': '2', 'Content-Type': 'application/json' },
            body: JSON.stringify({
              error: { code: 'SERVICE_UNAVAILABLE', message: 'Redis is not reachable', details: [] },
            }),
          });
        });
        await (await mainNavLink(page, 'Security')).click();
        const banner = page.getByTestId('wait-notice');
        await banner.waitFor();
        expect(await banner.textContent()).toContain('The service is briefly unavailable.');
        await shot('portal-wait-503');
        // Asked again after the wait: the sessions come.
        await page.getByTestId('session-row').first().waitFor({ timeout: 15_000 });
        await expect.poll(() => banner.count()).toBe(0);
        // The refused answers are the stand-ins' 429 and 503.
        expect(probe.problems.filter((p) => !/status of (429|503)/.test(p))).toEqual([]);
      } finally {
        await probe.close();
      }
    }, 180_000);
  }

  it('the session ends while a form is filled: the text stays, a sign-in appears in place, and the action is then done', async () => {
    const owner = await registerVerified(t, smtp);
    for (const width of [1280, 375]) {
      const probe = await openProbe(browser, { width });
      const { page } = probe;
      try {
        await signIn(page, owner.email);
        await (await mainNavLink(page, 'Team')).click();
        const noInvitations = page.getByText('No invitations waiting.');
        try {
          await noInvitations.waitFor({ timeout: 10_000 });
        } catch {
          // Seen in full runs only, after other browser files: the Team page without its invitations. What
          // the page shows is printed for the diagnosis, and the page is read once more.
          console.log(`the Team page after 10 s, at ${width} px:\n${await page.locator('body').innerText()}`);
          await page.reload();
          await noInvitations.waitFor();
        }
        const email = uniqueEmail(`lapse${width}`);
        await page.getByLabel('Email address').fill(email);
        // Meanwhile, on another device, "log out everywhere": this page's session ends with the others.
        const elsewhere = await login(t, owner.email);
        await t.http().delete('/v1/auth/sessions').set(bearer(elsewhere)).expect(204);

        await page.getByRole('button', { name: 'Send invitation' }).click();
        const again = page.getByTestId('sign-in-again');
        await again.waitFor();
        expect(await again.getByRole('heading', { name: 'Your session has ended' }).count()).toBe(1);
        // The page under it is the same, with the address typed.
        expect(await page.locator('#invite-email').inputValue()).toBe(email);
        expect(await accessibilityProblems(page)).toEqual([]);
        await screenshot(page, width === 1280 ? 'portal-session-ended' : 'portal-session-ended-phone');
        await again.getByLabel('Email address').fill(owner.email);
        await again.getByLabel('Password').fill(PASSWORD);
        await again.getByRole('button', { name: 'Sign in', exact: true }).click();
        // Signed in again, the invitation is sent as asked, without asking twice.
        await page.getByText(`Invitation sent to ${email}.`).waitFor();
        await expect.poll(() => again.count()).toBe(0);
        await mailTo(smtp, email);
        const team = await t
          .http()
          .get('/v1/account/team')
          .set(bearer(await login(t, owner.email)))
          .expect(200);
        expect((team.body.invitations as { email: string }[]).filter((i) => i.email === email)).toHaveLength(1);
        // The refused requests are the 401s of the ended session.
        expect(probe.problems.filter((p) => !/status of 401/.test(p))).toEqual([]);
      } finally {
        await probe.close();
      }
    }
  }, 180_000);
});
