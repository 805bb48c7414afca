import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import {
  PASSWORD,
  bearer,
  login,
  mailTo,
  register,
  registerVerified,
  totpCode,
  uniqueEmail,
} from './helpers/accounts.js';
import { accessibilityProblems, launchBrowser, listen, mainNavLink, openProbe, screenshot } from './helpers/browser.js';
import { startSmtpSink, tokenFromMail, type SmtpSink } from './helpers/smtp.js';

/** The link of a mail, opened on this test's server (the mail names PUBLIC_BASE_URL, a port not known here). */
function linkOf(mail: { text: string }, base: string): { path: string; url: string } {
  const link = new URL(/https?:\/\/\S+/.exec(mail.text)![0]);
  return { path: link.pathname, url: `${base}${link.pathname}${link.search}` };
}

describe('the managed deployment in the web front end: mailed links, account sign-in, the SSO landing', () => {
  let t: TestApp;
  let smtp: SmtpSink;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await startApp({ env: { DEPLOYMENT_MODE: 'managed', SMTP_URL: smtp.url, AUTH_FAILURE_LIMIT: '100000' } });
    base = await listen(t.app);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  /** Signs in through the portal's sign-in form, as a person does, and waits for the documents. */
  async function signIn(page: Page, email: string): Promise<void> {
    await page.goto(`${base}/app/sign-in`);
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Documents' }).waitFor();
  }

  it('verification: the link opens a page that confirms the address, takes the token out of the address bar, and says when a link is spent', async () => {
    const account = await register(t);
    const mail = await mailTo(smtp, account.email);
    const link = linkOf(mail, base);
    expect(link.path).toBe('/app/verify-email');
    for (const width of [1280, 375]) {
      const probe = await openProbe(browser, { width });
      try {
        await probe.page.goto(link.url);
        const state = probe.page.getByTestId('verify-state');
        const expected = width === 1280 ? 'verified' : 'refused';
        await expect.poll(() => state.getAttribute('data-state')).toBe(expected);
        expect(probe.page.url()).toBe(`${base}/app/verify-email`);
        expect(await accessibilityProblems(probe.page)).toEqual([]);
        if (width === 1280) await screenshot(probe.page, 'portal-verify-email');
        // The second opening is the spent link: the service refuses it with 400, which the page explains.
        expect(probe.problems.filter((p) => !p.includes('status of 400'))).toEqual([]);
      } finally {
        await probe.close();
      }
    }
    const tokens = await login(t, account.email);
    const me = await t.http().get('/v1/account/profile').set(bearer(tokens)).expect(200);
    expect(me.body.email_verified).toBe(true);
  });

  it('invitation: the invitee chooses a password on the page, with its rule shown, and joins; a used link is explained', async () => {
    const owner = await registerVerified(t, smtp);
    const ownerTokens = await login(t, owner.email);
    const email = uniqueEmail('invitee');
    await t
      .http()
      .post('/v1/account/team/invitations')
      .set(bearer(ownerTokens))
      .send({ email, role: 'member' })
      .expect(201);
    const mail = await mailTo(smtp, email);
    const link = linkOf(mail, base);
    expect(link.path).toBe('/app/accept-invitation');
    const token = tokenFromMail(mail);

    const probe = await openProbe(browser, { width: 375 });
    try {
      const { page } = probe;
      await page.goto(link.url);
      await page.getByLabel('Password').waitFor();
      expect(page.url()).toBe(`${base}/app/accept-invitation`);
      await page.getByLabel('Password').fill('short');
      await page.getByRole('button', { name: 'Accept the invitation' }).click();
      await page.locator('#password-error').waitFor();
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByLabel('Password').fill(PASSWORD);
      expect(await page.locator('.rule-met').count()).toBe(1);
      await page.getByRole('button', { name: 'Accept the invitation' }).click();
      await page.getByTestId('joined').waitFor();
      expect(await page.getByTestId('joined').textContent()).toContain(email);
      expect(await accessibilityProblems(page)).toEqual([]);
      await screenshot(page, 'portal-accept-invitation');
      expect(probe.problems).toEqual([]);
      // The new member signs in with the password chosen on the page.
      await login(t, email, PASSWORD);

      // The same link again: the page says the invitation is spent.
      await page.goto(`${base}/app/accept-invitation?token=${encodeURIComponent(token)}`);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Accept the invitation' }).click();
      await page.getByTestId('invitation-gone').waitFor();
      expect(await accessibilityProblems(page)).toEqual([]);
    } finally {
      await probe.close();
    }
  });

  it('signs in with email and password, then with the TOTP step, and signs out; a wrong password is explained', async () => {
    const owner = await registerVerified(t, smtp);
    const probe = await openProbe(browser);
    try {
      const { page } = probe;
      await page.goto(`${base}/app/documents`);
      await page.getByRole('main').getByRole('link', { name: 'Sign in' }).click();
      await page.getByLabel('Email address').fill(owner.email);
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByText('The email address or password is not right.').waitFor();
      expect(await accessibilityProblems(page)).toEqual([]);
      await screenshot(page, 'portal-sign-in');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      // The documents of the owner's organisation, with the account's access token.
      await page.getByTestId('empty').waitFor();
      // The refresh token is in an HttpOnly, Secure, SameSite=Strict cookie for the session paths alone.
      const cookies = await probe.context.cookies();
      expect(cookies.map((c) => ({ ...c, value: c.value.length > 20 }))).toEqual([
        expect.objectContaining({
          name: 'sdf_refresh',
          value: true,
          path: '/v1/auth/session',
          httpOnly: true,
          secure: true,
          sameSite: 'Strict',
        }),
      ]);
      expect(await page.evaluate('document.cookie')).toBe('');
      // A reload keeps the session: the page renews its access token from the cookie.
      await page.reload();
      await page.getByTestId('empty').waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('banner').getByRole('link', { name: 'Sign in' }).waitFor();
      expect(await probe.context.cookies()).toEqual([]);
      await page.reload();
      await page.getByRole('banner').getByRole('link', { name: 'Sign in' }).waitFor();
      expect(await page.evaluate('localStorage.length + sessionStorage.length')).toBe(0);
    } finally {
      await probe.close();
    }
    // Signing out ended the session on the service: the audit log has the logout.
    const rows = (await t.ds.query(`SELECT count(*)::int AS n FROM audit_log WHERE tenant_id = $1 AND action = $2`, [
      owner.tenantId,
      'logout',
    ])) as { n: number }[];
    expect(rows[0]!.n).toBe(1);

    // With TOTP enabled, the page asks for the code after the password.
    const tokens = await login(t, owner.email);
    const setup = await t.http().post('/v1/auth/totp/setup').set(bearer(tokens)).expect(200);
    const secret = setup.body.secret as string;
    await t
      .http()
      .post('/v1/auth/totp/enable')
      .set(bearer(tokens))
      .send({ code: await totpCode(secret) })
      .expect(200);
    const second = await openProbe(browser, { width: 375 });
    try {
      const { page } = second;
      await page.goto(`${base}/app/sign-in`);
      await page.getByLabel('Email address').fill(owner.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      // The next time step's code: the current one was spent enabling TOTP, and a code counts once.
      await page.getByLabel('Code from your authenticator app').fill(await totpCode(secret, 1));
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.getByTestId('empty').waitFor();
      expect(second.problems.filter((p) => !p.includes('status of 401'))).toEqual([]);
    } finally {
      await second.close();
    }
  });

  it('the SSO landing, after a sign-in this tab started, reads the tokens from the fragment, removes it from the address bar and history, and is signed in', async () => {
    const owner = await registerVerified(t, smtp);
    const tokens = await login(t, owner.email);
    const fragment = new URLSearchParams({
      access_token: tokens.access_token,
      refresh_token: tokens.refresh_token,
      expires_in: String(tokens.expires_in),
      token_type: 'Bearer',
    }).toString();
    const probe = await openProbe(browser);
    try {
      const { page } = probe;
      // The identity provider's round trip (run against a real one in web-sso-landing.e2e-spec.ts) ends in the
      // service's redirect to the RelayState with the tokens in the fragment; here that redirect answers at once.
      let relay: string | null = null;
      await page.route(
        (url) => url.pathname === `/saml/${owner.slug}/login`,
        async (route) => {
          relay = new URL(route.request().url()).searchParams.get('RelayState');
          await route.fulfill({ status: 303, headers: { location: `${base}${relay}#${fragment}` } });
        },
      );
      // The sign-in starts in this tab, from the landing's own button, which keeps its one-time state.
      await page.goto(`${base}/app/sso?org=${owner.slug}`);
      await page.getByRole('button', { name: 'Sign in with single sign-on from this browser' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      expect(relay).toMatch(new RegExp(`^/app/sso\\?org=${owner.slug}&state=[0-9a-f]{32}$`));
      // The tokens are out of the address bar and of every history entry; the state is spent.
      expect(page.url()).toBe(`${base}/app/`);
      expect(await page.evaluate(`sessionStorage.getItem('sdf.sso-state')`)).toBeNull();
      expect(await page.evaluate('history.length')).toBe(3);
      await page.goBack();
      expect(page.url()).toBe(`${base}/app/sso?org=${owner.slug}`);
      await page.goForward();
      expect(page.url()).toBe(`${base}/app/`);
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      await (await mainNavLink(page, 'Documents')).click();
      await page.getByTestId('empty').waitFor();
      expect(probe.problems).toEqual([]);
    } finally {
      await probe.close();
    }
  });

  it('the cookie session: the cookie alone is refused, a cross-site form post too, and a reused refresh token still ends every session', async () => {
    const owner = await registerVerified(t, smtp);
    const first = await login(t, owner.email);
    const other = await login(t, owner.email);
    const session = '/v1/auth/session/refresh';
    // Adopt: the refresh token moves into the cookie; the answer carries the access token alone.
    const adopted = await t
      .http()
      .post(session)
      .set('X-SDF-Session', '1')
      .send({ refresh_token: first.refresh_token })
      .expect(200);
    expect(Object.keys(adopted.body).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    const cookie = (adopted.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
    // The cookie without the header: refused.
    const bare = await t.http().post(session).set('Cookie', cookie).expect(400);
    expect(bare.body.error.details).toEqual([expect.objectContaining({ path: 'X-SDF-Session' })]);
    // With the header but from another origin: refused.
    await t
      .http()
      .post(session)
      .set('Cookie', cookie)
      .set('X-SDF-Session', '1')
      .set('Origin', 'https://evil.example')
      .expect(403);
    // A cross-site form post from a page of another origin: refused.
    const foreign = createServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end(`<form method="post" action="${base}${session}"></form><script>document.forms[0].submit()</script>`);
    });
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.2', resolve));
    const probe = await openProbe(browser);
    try {
      await probe.context.addCookies([
        {
          name: 'sdf_refresh',
          value: cookie.split('=')[1]!,
          url: `${base}/v1/auth/session`,
          httpOnly: true,
          sameSite: 'Lax',
        },
      ]);
      const answer = probe.page.waitForResponse((r) => r.url() === `${base}${session}`);
      await probe.page.goto(`http://127.0.0.2:${(foreign.address() as AddressInfo).port}/`);
      expect((await answer).status()).toBe(403);
    } finally {
      await probe.close();
      foreign.close();
    }
    // The cookie renews once more; the first refresh token, two rotations back now, is a reuse: every session ends.
    const renewed = await t.http().post(session).set('Cookie', cookie).set('X-SDF-Session', '1').expect(200);
    const renewedCookie = (renewed.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
    await t.http().post(session).set('X-SDF-Session', '1').send({ refresh_token: first.refresh_token }).expect(401);
    await t.http().post(session).set('Cookie', renewedCookie).set('X-SDF-Session', '1').expect(401);
    await t.http().post('/v1/auth/refresh').send({ refresh_token: other.refresh_token }).expect(401);
  });

  it('forgot password: the same answer for any address, a mailed link to a page, a new password that ends every session', async () => {
    const owner = await registerVerified(t, smtp);
    const before = await login(t, owner.email);
    // The answer never tells whether the address exists.
    const known = await t.http().post('/v1/auth/password/forgot').send({ email: owner.email }).expect(202);
    const unknown = await t
      .http()
      .post('/v1/auth/password/forgot')
      .send({ email: uniqueEmail('nobody') })
      .expect(202);
    expect(known.body).toEqual(unknown.body);
    const NEW_PASSWORD = 'a brand new passphrase 77';
    const probe = await openProbe(browser, { width: 375 });
    try {
      const { page } = probe;
      await page.goto(`${base}/app/sign-in`);
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.getByLabel('Email address').fill(owner.email);
      await page.getByRole('button', { name: 'Send the link' }).click();
      await page.getByTestId('reset-sent').waitFor();
      expect(await accessibilityProblems(page)).toEqual([]);
      // One mail for the two requests: at most one a minute per address.
      const mail = await mailTo(smtp, owner.email, 2);
      expect(mail.subject).toMatch(/new password/i);
      const link = linkOf(mail, base);
      expect(link.path).toBe('/app/reset-password');
      await page.goto(link.url);
      await page.getByLabel('Password').waitFor();
      expect(page.url()).toBe(`${base}/app/reset-password`);
      await page.getByLabel('Password').fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Set the new password' }).click();
      await page.getByTestId('reset-done').waitFor();
      expect(smtp.mails.filter((m) => m.to === owner.email.toLowerCase())).toHaveLength(2);
      expect(await accessibilityProblems(page)).toEqual([]);
      await screenshot(page, 'portal-reset-password');
      expect(probe.problems).toEqual([]);
      // The link works once.
      await page.goto(link.url);
      await page.getByLabel('Password').fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Set the new password' }).click();
      await page.getByTestId('reset-spent').waitFor();
    } finally {
      await probe.close();
    }
    // Every session that existed before is gone, the new password signs in, the old one does not.
    await t.http().get('/v1/account/profile').set(bearer(before)).expect(401);
    await t.http().post('/v1/auth/refresh').send({ refresh_token: before.refresh_token }).expect(401);
    await login(t, owner.email, NEW_PASSWORD);
    await t.http().post('/v1/auth/login').send({ email: owner.email, password: PASSWORD }).expect(401);
    const audit = (await t.ds.query(
      `SELECT action FROM audit_log WHERE tenant_id = $1 AND action LIKE $2 ORDER BY created_at`,
      [owner.tenantId, 'account.password_reset%'],
    )) as { action: string }[];
    expect(audit.map((r) => r.action)).toEqual(['account.password_reset_requested', 'account.password_reset']);
  });

  it('API keys: created with a name, the raw key shown once and usable at once, revoked after a confirmation', async () => {
    const owner = await registerVerified(t, smtp);
    const probe = await openProbe(browser);
    try {
      const { page } = probe;
      await signIn(page, owner.email);
      await (await mainNavLink(page, 'API keys')).click();
      await page.getByText('No API keys yet.').waitFor();
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.locator('#key-name-error').waitFor();
      await page.getByLabel('Name').fill('ERP integration');
      await page.getByRole('button', { name: 'Create key' }).click();
      const raw = (await page.getByTestId('raw-key').textContent())!.trim();
      expect(raw).toMatch(/^sdf_k/);
      expect(await accessibilityProblems(page)).toEqual([]);
      await screenshot(page, 'portal-api-keys');
      // The key works from a program at once.
      expect((await fetch(`${base}/tenant`, { headers: { 'X-API-Key': raw } })).status).toBe(200);
      await page.getByRole('button', { name: 'I have stored it' }).click();
      expect(await page.getByTestId('raw-key').count()).toBe(0);
      // The list shows its prefix, never the key.
      expect(await page.getByTestId('key-row').textContent()).not.toContain(raw);
      await page.getByRole('button', { name: /^Revoke/ }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      expect(await accessibilityProblems(page)).toEqual([]);
      await dialog.getByRole('button', { name: 'Revoke the key' }).click();
      await expect.poll(() => page.getByTestId('key-row').textContent()).toContain('revoked');
      expect((await fetch(`${base}/tenant`, { headers: { 'X-API-Key': raw } })).status).toBe(401);
      expect(probe.problems.filter((p) => !p.includes('status of 400'))).toEqual([]);
    } finally {
      await probe.close();
    }
  });

  it('team: invite by mail, accepted in a second browser, the new member shown, their role changed, then removed', async () => {
    const owner = await registerVerified(t, smtp);
    const ownerApi = await login(t, owner.email);
    const email = uniqueEmail('colleague');
    const probe = await openProbe(browser);
    const invitee = await openProbe(browser, { width: 375 });
    try {
      const { page } = probe;
      await signIn(page, owner.email);
      await (await mainNavLink(page, 'Team')).click();
      await page.locator(`[data-testid="member-row"][data-email="${owner.email}"]`).waitFor();
      await page.getByText('No invitations waiting.').waitFor();
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByLabel('Email address').fill(email);
      await page.getByRole('button', { name: 'Send invitation' }).click();
      await page.getByTestId('invitation-row').filter({ hasText: email }).waitFor();
      expect(await accessibilityProblems(page)).toEqual([]);

      // The invitee accepts from the mail, in a browser of their own.
      const link = linkOf(await mailTo(smtp, email), base);
      await invitee.page.goto(link.url);
      await invitee.page.getByLabel('Password').fill(PASSWORD);
      await invitee.page.getByRole('button', { name: 'Accept the invitation' }).click();
      await invitee.page.getByTestId('joined').waitFor();
      // Signed in, a member is offered the documents and their own security, not the team or the keys.
      await signIn(invitee.page, email);
      const memberNav = invitee.page.getByRole('navigation', { name: 'Main' });
      // At 375 px the sections are behind the header's menu button.
      await (await mainNavLink(invitee.page, 'Security')).waitFor();
      expect(await memberNav.getByRole('link', { name: 'Team' }).count()).toBe(0);
      expect(await memberNav.getByRole('link', { name: 'API keys' }).count()).toBe(0);

      await page.reload();
      const row = page.locator(`[data-testid="member-row"][data-email="${email}"]`);
      await row.waitFor();
      await screenshot(page, 'portal-team');
      await row.getByLabel(`Role of ${email}`).selectOption('admin');
      await expect
        .poll(async () => {
          // A session of the test's own, beside the page's.
          const team = await t.http().get('/v1/account/team').set(bearer(ownerApi)).expect(200);
          return (team.body.members as { email: string; role: string }[]).find((m) => m.email === email)?.role;
        })
        .toBe('admin');
      page.once('dialog', (dialog) => void dialog.accept());
      await row.getByRole('button', { name: /^Remove/ }).click();
      await expect.poll(() => row.count()).toBe(0);
      expect(probe.problems).toEqual([]);
    } finally {
      await probe.close();
      await invitee.close();
    }
  });

  it('security: TOTP set up from a QR code drawn in the page, recovery codes shown once and downloaded, turned off with one; the password changed', async () => {
    const owner = await registerVerified(t, smtp);
    const probe = await openProbe(browser, { width: 375 });
    try {
      const { page } = probe;
      await signIn(page, owner.email);
      await (await mainNavLink(page, 'Security')).click();
      await page.getByText('Two-step sign-in is off.').waitFor();
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByRole('button', { name: 'Set up two-step sign-in' }).click();
      await page.getByRole('img', { name: /QR code/ }).waitFor();
      await page.getByText('Cannot scan? Enter the key by hand').click();
      const secret = (await page.getByTestId('totp-secret').textContent())!.trim();
      // The QR code is drawn: the canvas holds dark modules.
      const dark = await page.evaluate(`(() => {
        const c = document.querySelector('canvas[role="img"]');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i] < 100) n++;
        return n;
      })()`);
      expect(dark).toBeGreaterThan(1000);
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByLabel('Code', { exact: true }).fill(await totpCode(secret));
      await page.getByRole('button', { name: 'Turn on two-step sign-in' }).click();
      const shown = page.getByTestId('recovery-codes');
      await shown.waitFor();
      const codes = (await shown.locator('li').allTextContents()).map((c) => c.trim());
      expect(codes).toHaveLength(10);
      // The codes sit inside the notice's padding, with no list marker hanging on its border.
      const outside = await page.evaluate(`(() => {
        const notice = document.querySelector('[data-testid="recovery-codes"]');
        const style = getComputedStyle(notice);
        const left = notice.getBoundingClientRect().left + parseFloat(style.borderLeftWidth) + parseFloat(style.paddingLeft);
        return [...notice.querySelectorAll('li')]
          .filter((li) => getComputedStyle(li).listStyleType !== 'none' || li.getBoundingClientRect().left < left - 0.5)
          .map((li) => li.textContent);
      })()`);
      expect(outside).toEqual([]);
      await screenshot(page, 'portal-security');
      const [file] = await Promise.all([
        page.waitForEvent('download'),
        shown.getByRole('button', { name: 'Download' }).click(),
      ]);
      const saved = join(tmpdir(), `recovery-${Date.now()}.txt`);
      await file.saveAs(saved);
      expect(readFileSync(saved, 'utf8').trim().split('\n')).toEqual(codes);
      rmSync(saved);
      await shown.getByRole('button', { name: 'I have stored them' }).click();
      await page.getByText('Two-step sign-in is on.').waitFor();
      // Off again with a recovery code.
      await page.getByLabel('Code', { exact: true }).fill(codes[0]!);
      await page.getByRole('button', { name: 'Turn off two-step sign-in' }).click();
      await page.getByText('Two-step sign-in is off.').waitFor();

      // The password, on the profile: a wrong current one is named as such; the right one changes it.
      await (await mainNavLink(page, 'Profile')).click();
      await page.getByRole('heading', { name: 'Profile' }).waitFor();
      await page.getByLabel('Current password').fill('not my password at all');
      await page.locator('#new-password').fill('another long passphrase 5');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.locator('#current-password-error').waitFor();
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByLabel('Current password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByTestId('password-changed').waitFor();
      await login(t, owner.email, 'another long passphrase 5');
      expect(probe.problems.filter((p) => !p.includes('status of 400'))).toEqual([]);
    } finally {
      await probe.close();
    }
  });

  it('usage and audit log: the period against the plan, the log filtered by action and downloaded as CSV', async () => {
    const owner = await registerVerified(t, smtp);
    for (let i = 0; i < 3; i++) await login(t, owner.email);
    const probe = await openProbe(browser);
    try {
      const { page } = probe;
      await signIn(page, owner.email);
      const nav = page.getByRole('navigation', { name: 'Main' });
      await nav.getByRole('link', { name: 'Usage' }).click();
      await page.getByTestId('plan-name').waitFor();
      // The plan and the usage are two requests: the meters come with the second, which may answer last.
      await expect.poll(() => page.getByTestId('meter').count()).toBe(3);
      expect(await accessibilityProblems(page)).toEqual([]);
      await screenshot(page, 'portal-usage');

      await nav.getByRole('link', { name: 'Audit log' }).click();
      await page.getByTestId('audit-row').first().waitFor();
      await page.getByLabel('Action').selectOption({ label: 'Signed in' });
      const rows = page.getByTestId('audit-row');
      await expect
        .poll(async () => new Set(await rows.evaluateAll((r) => r.map((e) => e.getAttribute('data-action')))))
        .toEqual(new Set(['login']));
      expect(await rows.count()).toBe(4);
      expect(await accessibilityProblems(page)).toEqual([]);
      const [file] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download CSV' }).click(),
      ]);
      const saved = join(tmpdir(), `audit-${Date.now()}.csv`);
      await file.saveAs(saved);
      const lines = readFileSync(saved, 'utf8').trim().split('\r\n');
      rmSync(saved);
      expect(lines[0]).toBe(
        'created_at,action_label,actor_name,actor_email,actor_key_prefix,document_title,action,actor,resource_id,ip_address,metadata',
      );
      expect(lines).toHaveLength(5);
      expect(lines.slice(1).every((line) => line.includes('"Signed in"') && line.includes('"login"'))).toBe(true);
      expect(probe.problems).toEqual([]);
    } finally {
      await probe.close();
    }
  });

  it('sign up: the organisation, its short name proposed from the name, the password rule as one types; then the mailed link and sign-in', async () => {
    const email = uniqueEmail('founder');
    const name = `Müller & Söhne ${Date.now()}`;
    const probe = await openProbe(browser, { width: 375 });
    try {
      const { page } = probe;
      await page.goto(`${base}/app/sign-in`);
      await page.getByRole('link', { name: 'Create an organisation' }).click();
      await page.getByLabel('Organisation name').fill(name);
      expect(await page.getByLabel('Short name').inputValue()).toBe(`muller-sohne-${name.split(' ').pop()}`);
      await page.getByLabel('Your email address').fill(email);
      await page.getByLabel('Password').fill('short');
      expect(await page.locator('.rule-met').count()).toBe(0);
      await page.getByRole('button', { name: 'Create the organisation' }).click();
      await page.locator('#password-error').waitFor();
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByLabel('Password').fill(PASSWORD);
      expect(await page.locator('.rule-met').count()).toBe(1);
      await screenshot(page, 'portal-sign-up');
      await page.getByRole('button', { name: 'Create the organisation' }).click();
      await page.getByTestId('signed-up').waitFor();
      await page.goto(linkOf(await mailTo(smtp, email), base).url);
      await expect.poll(() => page.getByTestId('verify-state').getAttribute('data-state')).toBe('verified');
      await page.goto(`${base}/app/sign-in`);
      await page.getByLabel('Email address').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      // Free plan, just created: the documents page, empty.
      await page.getByTestId('empty').waitFor();
      expect(probe.problems).toEqual([]);
    } finally {
      await probe.close();
    }
  });

  it('sign up with an address that has an account: the same "check your mail" page, and the owner is mailed', async () => {
    const owner = await register(t);
    const taken = owner.email.toUpperCase();
    const probe = await openProbe(browser, { width: 375 });
    try {
      const { page } = probe;
      await page.goto(`${base}/app/sign-up`);
      await page.getByLabel('Organisation name').fill(`Second ${Date.now()}`);
      await page.getByLabel('Your email address').fill(taken);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Create the organisation' }).click();
      await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
      expect(await page.getByTestId('signed-up').innerText()).toContain(`We sent a mail to ${taken}.`);
      expect((await mailTo(smtp, owner.email, 2)).subject).toBe('Someone tried to sign up with your address');
      expect(probe.problems).toEqual([]);
    } finally {
      await probe.close();
    }
  });
});
