import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { typicalInvoice } from '../src/sdf/testing/corpus.js';
import { startApp, type TestApp } from './helpers/app.js';
import { PASSWORD, bearer, mailTo, totpCode, uniqueEmail } from './helpers/accounts.js';
import {
  accessibilityProblems,
  launchBrowser,
  mainNavLink,
  signOutFromHeader,
  openProbe,
  screenshot,
  type PageProbe,
} from './helpers/browser.js';
import { TestIdp, closedPort } from './helpers/saml-idp.js';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';
import { StripeStandIn } from './helpers/stripe-stand-in.js';

const run = promisify(execFile);
const CLI = join(process.cwd(), 'dist', 'src', 'cli', 'sdf.js');
const SECRET_KEY = 'sk_test_portal_0123456789';
const WEBHOOK_SECRET = 'whsec_portal_0123456789abcdef';
const NEW_PASSWORD = 'a brand new passphrase 77';

/** The first link of a mail (the service writes PUBLIC_BASE_URL, which is this test's server). */
const linkIn = (mail: { text: string }) => /https?:\/\/\S+/.exec(mail.text)![0];

/**
 * The managed deployment from a newcomer's sign-up to a signed invoice and back, in Chromium, against the
 * real service with the project's SMTP test server, Stripe stand-in and SAML test identity provider.
 */
describe('the managed portal, end to end in the browser', () => {
  let t: TestApp;
  let smtp: SmtpSink;
  let stripe: StripeStandIn;
  let idp: TestIdp;
  let base: string;
  let browser: Browser;
  let dir: string;
  let invoicePath: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sdf-portal-journey-'));
    invoicePath = join(dir, 'invoice-2026-00142.sdf');
    writeFileSync(invoicePath, await typicalInvoice());
    smtp = await startSmtpSink();
    idp = await TestIdp.start();
    stripe = await new StripeStandIn({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET }).start();
    // The mails, Stripe's return and the SAML audience name the public address, so it is chosen first.
    const port = await closedPort();
    base = `http://127.0.0.1:${port}`;
    t = await startApp({
      env: {
        DEPLOYMENT_MODE: 'managed',
        PUBLIC_BASE_URL: base,
        SMTP_URL: smtp.url,
        STRIPE_SECRET_KEY: SECRET_KEY,
        STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        STRIPE_PRICE_DEVELOPER: 'price_developer_m',
        STRIPE_PRICE_TEAM: 'price_team_m',
        STRIPE_PRICE_BUSINESS: 'price_business_m',
        STRIPE_RETURN_URL: `${base}/app/plan`,
        STRIPE_API_BASE: stripe.base,
        // The test identity provider's metadata is on loopback, which the address guard refuses by default.
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        SAML_METADATA_REFRESH_MINUTES: '0',
        // Free allows 20 requests a minute and the pages poll while a document is checked or signed; a
        // one-second window keeps a journey that runs at machine speed within the plan's rate.
        RATE_LIMIT_WINDOW_SECONDS: '1',
      },
    });
    await t.app.listen(port, '127.0.0.1');
    stripe.webhookUrl = `${base}/v1/billing/webhook`;
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await stripe?.stop();
    await idp?.close();
    await smtp?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function accessible(page: Page): Promise<void> {
    expect(await accessibilityProblems(page)).toEqual([]);
  }

  const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });

  async function signIn(page: Page, email: string, password: string, code?: string): Promise<void> {
    await page.goto(`${base}/app/sign-in`);
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    if (code !== undefined) {
      await page.getByLabel('Code from your authenticator app').fill(code);
      await page.getByRole('button', { name: 'Confirm' }).click();
    }
    await page.getByRole('heading', { name: 'Documents' }).waitFor();
  }

  for (const width of [1280, 375]) {
    it(`sign-up to a signed invoice, a team, a paid plan, the audit trail and a reset password, at ${width} px`, async () => {
      const wide = width === 1280;
      const shot = (page: Page, name: string) => (wide ? screenshot(page, name) : Promise.resolve());
      const email = uniqueEmail('journey');
      const orgName = `Journey ${width} ${Date.now().toString(36)}`;
      const probe: PageProbe = await openProbe(browser, { width });
      const { page } = probe;
      let invitee: PageProbe | undefined;
      try {
        // Sign up from the start page, with the password rule shown as one types.
        await page.goto(`${base}/`);
        await page.getByRole('main').getByRole('link', { name: 'Create an organisation' }).click();
        await page.getByLabel('Organisation name').fill(orgName);
        const slug = await page.getByLabel('Short name').inputValue();
        await page.getByLabel('Your name').fill('Ada Lovelace');
        await page.getByLabel('Your email address').fill(email);
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Create the organisation' }).click();
        await page.getByTestId('signed-up').waitFor();

        // The verification link from the mail.
        await page.goto(linkIn(await mailTo(smtp, email)));
        await expect.poll(() => page.getByTestId('verify-state').getAttribute('data-state')).toBe('verified');

        // Log in; enable TOTP with the key from the page (the test computes the codes).
        await signIn(page, email, PASSWORD);
        await (await mainNavLink(page, 'Security')).click();
        await page.getByRole('button', { name: 'Set up two-step sign-in' }).click();
        await page.getByText('Cannot scan? Enter the key by hand').click();
        const secret = (await page.getByTestId('totp-secret').textContent())!.trim();
        await page.getByLabel('Code', { exact: true }).fill(await totpCode(secret));
        await page.getByRole('button', { name: 'Turn on two-step sign-in' }).click();
        await page.getByTestId('recovery-codes').waitFor();
        const codes = (await page.getByTestId('recovery-codes').locator('li').allTextContents()).map((c) => c.trim());
        expect(codes).toHaveLength(10);
        await page.getByRole('button', { name: 'I have stored them' }).click();
        await page.getByText('Two-step sign-in is on.').waitFor();

        // Log out, and in again with a code.
        await signOutFromHeader(page);
        await page.getByRole('banner').getByRole('link', { name: 'Sign in' }).waitFor({ state: 'attached' });
        // The next time step's code: the current one was spent enabling TOTP, and a code counts once.
        await signIn(page, email, PASSWORD, await totpCode(secret, 1));
        // The sessions of the account: this browser, marked.
        await (await mainNavLink(page, 'Security')).click();
        await page.locator('[data-testid="session-row"][data-current]').waitFor();
        await accessible(page);
        await shot(page, 'portal-security-sessions');
        // The profile: the name given at sign-up.
        await (await mainNavLink(page, 'Profile')).click();
        await expect.poll(() => page.getByLabel('Your name').inputValue()).toBe('Ada Lovelace');
        await accessible(page);
        await shot(page, 'portal-profile');

        // An API key, used from a program.
        await (await mainNavLink(page, 'API keys')).click();
        await page.getByLabel('Name').fill('ERP integration');
        await page.getByRole('button', { name: 'Create key' }).click();
        const rawKey = (await page.getByTestId('raw-key').textContent())!.trim();
        const tenant = await fetch(`${base}/tenant`, { headers: { 'X-API-Key': rawKey } });
        expect(tenant.status).toBe(200);
        await page.getByRole('button', { name: 'I have stored it' }).click();

        // Upload an invoice and watch it become valid; open it: page 1 drawn, its data.
        await (await mainNavLink(page, 'Documents')).click();
        await page.setInputFiles('#upload-file', invoicePath);
        const uploaded = page.getByTestId('upload-status').getByTestId('status');
        await expect.poll(() => uploaded.getAttribute('data-status'), { timeout: 60_000 }).toBe('valid');
        await page.getByTestId('document-row').getByRole('link').first().click();
        await page.locator('canvas[data-page="1"]').waitFor({ timeout: 60_000 });
        await expect
          .poll(() => page.getByRole('heading', { level: 1 }).textContent())
          .toBe('Invoice INV-2026-00142 · Acme Supplies GmbH');
        await page.getByRole('tab', { name: 'Data' }).click();
        await page.getByRole('tabpanel').getByText('Acme Supplies GmbH').first().waitFor();

        // Sign it, then download it and check it with `sdf verify` against the organisation's keys.
        await page.getByRole('button', { name: 'Sign', exact: true }).click();
        const head = page.locator('.page-head').getByTestId('status');
        await expect.poll(() => head.getAttribute('data-status'), { timeout: 30_000 }).toBe('signed');
        await accessible(page);
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('button', { name: 'Download', exact: true }).click(),
        ]);
        const saved = join(dir, `signed-${width}.sdf`);
        await download.saveAs(saved);
        const verified = await run(process.execPath, [
          CLI,
          'verify',
          saved,
          '--jwks-url',
          `${base}/.well-known/sdf-keys/${slug}`,
        ]);
        expect(verified.stdout).toContain('VALID, trusted');

        // Invite a member; they accept from the mail in a second browser; their role is changed.
        const memberEmail = uniqueEmail('member');
        await (await mainNavLink(page, 'Team')).click();
        await page.getByLabel('Email address').fill(memberEmail);
        await page.getByRole('button', { name: 'Send invitation' }).click();
        await page.getByTestId('invitation-row').waitFor();
        invitee = await openProbe(browser, { width });
        await invitee.page.goto(linkIn(await mailTo(smtp, memberEmail)));
        await invitee.page.getByLabel('Your name').fill('Grace Hopper');
        await invitee.page.getByLabel('Password').fill(PASSWORD);
        await invitee.page.getByRole('button', { name: 'Accept the invitation' }).click();
        await invitee.page.getByTestId('joined').waitFor();
        await page.reload();
        const memberRow = page.locator(`[data-testid="member-row"][data-email="${memberEmail}"]`);
        await memberRow.getByText('Grace Hopper').waitFor();
        await memberRow.getByLabel(`Role of ${memberEmail}`).selectOption('admin');
        // A second session of the owner, from a program: it must end with the password reset below.
        const other = await apiLogin(email, PASSWORD, codes.pop()!);
        await expect
          .poll(async () => {
            const team = await fetch(`${base}/v1/account/team`, { headers: bearer(other) });
            const body = (await team.json()) as { members: { email: string; role: string }[] };
            return body.members.find((m) => m.email === memberEmail)?.role;
          })
          .toBe('admin');
        await accessible(page);
        await shot(page, 'portal-team');

        // Upgrade through the Stripe stand-in; the plan and the usage page show the new limits.
        await (await mainNavLink(page, 'Plan')).click();
        await page.locator('[data-testid="plan-row"][data-plan="free"][aria-current="true"]').waitFor();
        await accessible(page);
        await page.getByRole('button', { name: 'Upgrade to Team' }).click();
        await page.getByRole('button', { name: 'Pay with a test card' }).click();
        await page.waitForURL(`${base}/app/plan?checkout=success`);
        await expect
          .poll(() => page.getByTestId('checkout-result').textContent(), { timeout: 20_000 })
          .toContain('you are on Team now');
        await page.locator('[data-testid="plan-row"][data-plan="team"][aria-current="true"]').waitFor();
        await (await mainNavLink(page, 'Usage')).click();
        await expect.poll(() => page.getByTestId('plan-name').textContent()).toContain('Team');
        const documentsMeter = page.locator('[data-testid="meter"][data-label="Documents uploaded"]');
        const catalog = (await (
          await fetch(`${base}/v1/billing/plans`, { headers: { 'X-API-Key': rawKey } })
        ).json()) as { data: { id: string; limits: { documents: number } }[] };
        const teamDocuments = catalog.data.find((p) => p.id === 'team')!.limits.documents;
        // The paid period starts with the subscription, so its count starts again.
        await expect
          .poll(() => documentsMeter.textContent())
          .toContain(`of ${new Intl.NumberFormat('en-US').format(teamDocuments)}`);
        await accessible(page);

        // The audit log filtered to the sign event, downloaded as CSV.
        await (await mainNavLink(page, 'Audit log')).click();
        await page.getByLabel('Action').selectOption({ label: 'Document signed' });
        await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
        const [csv] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('button', { name: 'Download CSV' }).click(),
        ]);
        const csvPath = join(dir, `audit-${width}.csv`);
        await csv.saveAs(csvPath);
        const lines = readFileSync(csvPath, 'utf8').trim().split('\n');
        expect(lines).toHaveLength(2);
        expect(lines[1]).toContain(',"sign",');

        // Forgot password from the login page; reset through the mail; every old session is gone.
        await signOutFromHeader(page);
        await page.goto(`${base}/app/sign-in`);
        await page.getByRole('link', { name: 'Forgot your password?' }).click();
        await page.getByLabel('Email address').fill(email);
        await page.getByRole('button', { name: 'Send the link' }).click();
        await page.getByTestId('reset-sent').waitFor();
        await accessible(page);
        await shot(page, 'portal-forgot-password');
        await page.goto(linkIn(await mailTo(smtp, email, 2)));
        await page.getByLabel('Password').fill(NEW_PASSWORD);
        await page.getByRole('button', { name: 'Set the new password' }).click();
        await page.getByTestId('reset-done').waitFor();
        expect((await fetch(`${base}/v1/account/profile`, { headers: bearer(other) })).status).toBe(401);
        // In again with the new password and a recovery code; this is the one session left.
        await signIn(page, email, NEW_PASSWORD, codes.pop()!);
        await (await mainNavLink(page, 'Security')).click();
        await expect.poll(() => page.getByTestId('session-row').count()).toBe(1);

        // Log out everywhere.
        page.once('dialog', (d) => void d.accept());
        await page.getByRole('button', { name: 'Log out everywhere' }).click();
        await page.getByText('You are signed out on every device.').waitFor();
        if (!wide) expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
        // The refused requests are the API's 401s after the sessions ended.
        expect(probe.problems.filter((p) => !/status of 40[01]/.test(p))).toEqual([]);
      } finally {
        await invitee?.close();
        await probe.close();
      }
    }, 240_000);
  }

  /** A password login from a program, its TOTP step answered with a recovery code (a code counts once). */
  async function apiLogin(email: string, password: string, recovery: string) {
    const first = await fetch(`${base}/v1/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    const step = (await first.json()) as { totp_session_token?: string; session_token?: string };
    const token = step.totp_session_token ?? step.session_token;
    const second = await fetch(`${base}/v1/auth/totp/validate`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ session_token: token, code: recovery }),
    });
    expect(second.status).toBe(200);
    return (await second.json()) as { access_token: string; refresh_token: string };
  }

  it('single sign-on: the owner configures it on the settings page, signs out, and comes back through the IdP', async () => {
    const email = uniqueEmail('sso-owner');
    const slug = `sso-${Date.now().toString(36)}`;
    const registered = await fetch(`${base}/v1/auth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD, organization: 'SSO GmbH', slug }),
    });
    expect(registered.status).toBe(202);
    const probe = await openProbe(browser, { width: 1280 });
    const { page } = probe;
    try {
      await page.goto(linkIn(await mailTo(smtp, email)));
      await expect.poll(() => page.getByTestId('verify-state').getAttribute('data-state')).toBe('verified');
      await signIn(page, email, PASSWORD);
      await (await mainNavLink(page, 'Settings')).click();
      await page.getByTestId('sso-state').getByText('off').waitFor();
      expect(await page.getByTestId('sp-acs-url').inputValue()).toBe(`${base}/saml/${slug}/acs`);
      expect(await page.getByTestId('sp-entity-id').inputValue()).toBe(`${base}/saml/${slug}`);
      // Metadata that does not load is refused at its field.
      await page.getByLabel('Metadata URL', { exact: true }).fill(`${idp.metadataUrl}-missing`);
      await page.getByRole('button', { name: 'Save and turn on single sign-on' }).click();
      await page.locator('#metadata_url-error').waitFor();
      await accessible(page);
      await page.getByLabel('Metadata URL', { exact: true }).fill(idp.metadataUrl);
      await page.getByRole('button', { name: 'Save and turn on single sign-on' }).click();
      await page.getByTestId('sso-saved').getByText('Single sign-on is on').waitFor();
      await page.getByTestId('idp-facts').getByText(idp.entityId).waitFor();
      await accessible(page);
      await screenshot(page, 'portal-settings-sso');

      // Signed out, in again through the identity provider, by the organisation's short name.
      await signOutFromHeader(page);
      await page.goto(`${base}/app/sign-in`);
      await page.getByLabel('Organisation short name').fill('no-such-organisation');
      await page.getByRole('button', { name: 'Continue to your identity provider' }).click();
      await page.locator('#sso-error').waitFor();
      await page.getByLabel('Organisation short name').fill(slug);
      await page.getByRole('button', { name: 'Continue to your identity provider' }).click();
      // The portal's sign-in page has an Email field and a Sign in button too: on the IdP's page first.
      await page.waitForURL((url) => url.href.startsWith(idp.ssoUrl));
      await page.getByLabel('Email').fill(email);
      await page.getByRole('button', { name: 'Sign in' }).click();
      // Back in the portal, signed in as the owner, with the tokens gone from the address bar.
      await page.waitForURL(`${base}/app/`);
      await nav(page).getByRole('link', { name: 'Settings' }).waitFor();
      expect(page.url()).toBe(`${base}/app/`);
      expect(await page.evaluate('location.hash')).toBe('');
      await (await mainNavLink(page, 'Profile')).click();
      await expect.poll(() => page.getByTestId('profile-facts').textContent()).toContain(email);
      expect(await page.evaluate('document.cookie')).toBe('');
    } finally {
      await probe.close();
    }
  }, 120_000);
});
