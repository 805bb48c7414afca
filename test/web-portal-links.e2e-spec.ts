import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { PASSWORD, bearer, login, mailTo, register, registerVerified, uniqueEmail } from './helpers/accounts.js';
import { accessibilityProblems, launchBrowser, listen, openProbe, screenshot } from './helpers/browser.js';
import { startSmtpSink, tokenFromMail, type SmtpSink } from './helpers/smtp.js';

/** The link of a mail, opened on this test's server (the mail names PUBLIC_BASE_URL, a port not known here). */
function linkOf(mail: { text: string }, base: string): { path: string; url: string } {
  const link = new URL(/https?:\/\/\S+/.exec(mail.text)![0]);
  return { path: link.pathname, url: `${base}${link.pathname}${link.search}` };
}

describe('the pages the managed deployment mails link to', () => {
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
});
