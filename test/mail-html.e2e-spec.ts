import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { PASSWORD, bearer, login, mailTo, totpCode, uniqueEmail } from './helpers/accounts.js';
import { SCREENSHOTS, accessibilityProblems, launchBrowser, openProbe } from './helpers/browser.js';
import { closedPort } from './helpers/saml-idp.js';
import { startSmtpSink, tokenFromMail, type ReceivedMail, type SmtpSink } from './helpers/smtp.js';
import { linksOf, startMailPage } from './stand-ins/mail-page.js';

/** An organisation name that is markup: every mail and page must show it as text. */
const HOSTILE_ORG = `<script>alert("x")</script> & <b>Sons</b>`;

/** A 6-digit code that is not the current one (nor one step either side). */
async function wrongCode(secret: string): Promise<string> {
  const near = new Set([await totpCode(secret, -1), await totpCode(secret), await totpCode(secret, 1)]);
  for (let n = 0; ; n++) {
    const code = String(n).padStart(6, '0');
    if (!near.has(code)) return code;
  }
}

/**
 * The account mails as a mail client receives them (parsed by mailparser, the HTML part read by
 * Chromium's own parser), and as the stand-ins' mail page shows them.
 */
describe('account mails: a text part and an HTML part with the same links', () => {
  let t: TestApp;
  let smtp: SmtpSink;
  let mailPage: { url: string; close: () => void };
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    mailPage = await startMailPage(smtp.mails);
    // The mails name the public address, so it is chosen before the service starts.
    const port = await closedPort();
    base = `http://127.0.0.1:${port}`;
    t = await startApp({
      env: {
        DEPLOYMENT_MODE: 'managed',
        PUBLIC_BASE_URL: base,
        SMTP_URL: smtp.url,
        AUTH_FAILURE_LIMIT: '100000',
        TOTP_BACKOFF_BASE_MS: '20',
        TOTP_BACKOFF_MAX_MS: '200',
        TOTP_LOCK_AFTER: '2',
      },
    });
    await t.app.listen(port, '127.0.0.1');
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    mailPage?.close();
    await smtp?.close();
  });

  /** What a browser makes of a mail's HTML part (a script in it that ran would open a dialog). */
  async function readHtml(mail: ReceivedMail) {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      let dialogs = 0;
      page.on('dialog', (d) => {
        dialogs++;
        void d.dismiss();
      });
      await page.setContent(mail.html!);
      return {
        hrefs: await page.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? '')),
        // The button: the link laid out as a block of its own (inline CSS, as mail clients need).
        buttons: await page
          .locator('a')
          .evaluateAll((as) =>
            as
              .filter((a) => /display:\s*inline-block/.test(a.getAttribute('style') ?? ''))
              .map((a) => a.textContent ?? ''),
          ),
        text: await page.locator('body').innerText(),
        scripts: await page.locator('script').count(),
        injected: await page.locator('b').count(),
        // Remote or external content a mail client would load: images, style sheets, frames, sources.
        external: await page.locator('img, link, style, iframe, object, embed, [src], [background]').count(),
        styledUrls: await page
          .locator('[style]')
          .evaluateAll((els) => els.filter((e) => /url\(/i.test(e.getAttribute('style') ?? '')).length),
        accessibility: await accessibilityProblems(page),
        dialogs,
      };
    } finally {
      await context.close();
    }
  }

  it('verification, address taken, invitation, reset and lock: multipart/alternative, the same links in both parts, the organisation named as text', async () => {
    const email = uniqueEmail('mails');
    const slug = `mails-${Date.now().toString(36)}`;
    const registerBody = { email, password: PASSWORD, organization: HOSTILE_ORG, slug };
    await t.http().post('/v1/auth/register').send(registerBody).expect(202);
    const verification = await mailTo(smtp, email, 1);
    // The same address again: its owner is told, nothing is created.
    await t
      .http()
      .post('/v1/auth/register')
      .send({ ...registerBody, slug: `${slug}-2` })
      .expect(202);
    const taken = await mailTo(smtp, email, 2);
    await t
      .http()
      .post('/v1/auth/verify-email')
      .send({ token: tokenFromMail(verification) })
      .expect(200);
    const tokens = await login(t, email);
    const invitee = uniqueEmail('invitee');
    await t
      .http()
      .post('/v1/account/team/invitations')
      .set(bearer(tokens))
      .send({ email: invitee, role: 'member' })
      .expect(201);
    const invitation = await mailTo(smtp, invitee, 1);
    await t.http().post('/v1/auth/password/forgot').send({ email }).expect(202);
    const reset = await mailTo(smtp, email, 3);

    // Two-step sign-in on, then wrong codes until it locks (TOTP_LOCK_AFTER=2 here).
    const setup = await t.http().post('/v1/auth/totp/setup').set(bearer(tokens)).expect(200);
    const secret = setup.body.secret as string;
    await t
      .http()
      .post('/v1/auth/totp/enable')
      .set(bearer(tokens))
      .send({ code: await totpCode(secret) })
      .expect(200);
    const wrong = await wrongCode(secret);
    let lockedStatus = 0;
    for (let attempt = 0; attempt < 20 && lockedStatus !== 403; attempt++) {
      const ticket = (await t.http().post('/v1/auth/login').send({ email, password: PASSWORD }).expect(200)).body
        .session_token as string;
      const res = await t.http().post('/v1/auth/totp/validate').send({ session_token: ticket, code: wrong });
      // 429: the backoff between tries; a fresh login tries again after it.
      if (res.status === 429) await new Promise((r) => setTimeout(r, 250));
      else lockedStatus = res.status;
    }
    expect(lockedStatus).toBe(403);
    const locked = await mailTo(smtp, email, 4);

    const expected: { mail: ReceivedMail; subject: RegExp; button: string; org: boolean; expiry: RegExp | null }[] = [
      {
        mail: verification,
        subject: /Confirm your email/,
        button: 'Confirm my address',
        org: true,
        expiry: /24 hours/,
      },
      { mail: taken, subject: /tried to sign up/, button: 'Sign in', org: true, expiry: null },
      { mail: invitation, subject: /invited/, button: 'Accept the invitation', org: true, expiry: /7 days/ },
      { mail: reset, subject: /new password/, button: 'Choose a new password', org: true, expiry: /30 minutes/ },
      { mail: locked, subject: /locked/, button: 'Sign in with a recovery code', org: true, expiry: null },
    ];
    for (const { mail, subject, button, org, expiry } of expected) {
      expect(mail.subject).toMatch(subject);
      expect(mail.contentType, mail.subject).toBe('multipart/alternative');
      expect(mail.html, mail.subject).not.toBeNull();
      const textLinks = linksOf(mail.text);
      expect(textLinks.length, mail.subject).toBeGreaterThan(0);
      expect(textLinks.every((l) => l.startsWith(`${base}/app/`))).toBe(true);
      const html = await readHtml(mail);
      // Every link of the HTML part is one of the text part's, and every one of those is in the HTML part.
      expect([...new Set(html.hrefs)].sort(), mail.subject).toEqual([...textLinks].sort());
      expect(html.buttons, mail.subject).toEqual([button]);
      expect(html.text).toMatch(/You received this mail because/);
      if (expiry) expect(html.text).toMatch(expiry);
      if (org) expect(html.text, mail.subject).toContain(HOSTILE_ORG);
      expect(html.scripts).toBe(0);
      expect(html.dialogs).toBe(0);
      expect(html.injected).toBe(0);
      expect(html.external).toBe(0);
      expect(html.styledUrls).toBe(0);
      expect(html.accessibility, mail.subject).toEqual([]);
    }
    // The subject of the invitation names the organisation as it is; the text part is plain text.
    expect(invitation.subject).toBe(`You are invited to ${HOSTILE_ORG}`);
    expect(invitation.text).toContain(HOSTILE_ORG);
  }, 120_000);

  for (const width of [1280, 375]) {
    it(`the stand-ins' mail page shows the HTML part in a sandboxed frame with its links; its button confirms the address, at ${width} px`, async () => {
      const email = uniqueEmail(`page-${width}`);
      await t
        .http()
        .post('/v1/auth/register')
        .send({
          email,
          password: PASSWORD,
          organization: HOSTILE_ORG,
          slug: `page-${width}-${Date.now().toString(36)}`,
        })
        .expect(202);
      const mail = await mailTo(smtp, email);
      const probe = await openProbe(browser, { width });
      const { page } = probe;
      let alerted = false;
      page.on('dialog', (d) => {
        alerted = true;
        void d.dismiss();
      });
      try {
        await page.goto(`${mailPage.url}/`);
        const article = page.getByRole('article', { name: mail.subject }).filter({ hasText: email });
        const frameElement = article.locator('iframe');
        expect(await frameElement.getAttribute('sandbox')).toBe('allow-top-navigation-by-user-activation');
        // The links of the mail, listed beside it.
        const listed = await article
          .getByRole('list')
          .getByRole('link')
          .evaluateAll((as) => as.map((a) => a.getAttribute('href')));
        expect(listed).toEqual(linksOf(mail.text));
        const frame = article.frameLocator('iframe');
        await frame.getByRole('heading', { name: 'Confirm your email address' }).waitFor();
        // The organisation's name is text in the mail, not markup.
        await frame.getByText(HOSTILE_ORG).first().waitFor();
        // The mail alone: the page lists every mail of this run.
        const name = width === 1280 ? 'mail-page-verification' : 'mail-page-verification-narrow';
        await article.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
        await frame.getByRole('link', { name: 'Confirm my address' }).click();
        // The button opens the portal in the window, which confirms the address and offers the next step.
        await page.waitForURL(`${base}/app/verify-email`);
        await expect.poll(() => page.getByTestId('verify-state').getAttribute('data-state')).toBe('verified');
        await page.getByRole('main').getByRole('link', { name: 'Sign in' }).waitFor();
        expect(alerted).toBe(false);
        expect(probe.problems).toEqual([]);
      } finally {
        await probe.close();
      }
    }, 60_000);
  }
});
