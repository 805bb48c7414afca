import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { registerVerified, type Account } from './helpers/accounts.js';
import { launchBrowser, openProbe } from './helpers/browser.js';
import { closedPort } from './helpers/saml-idp.js';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';

const RENEWAL = '/v1/auth/session/refresh';

/**
 * Every page load of the portal renews its session from the cookie, which rotates the refresh token. A
 * person who moves on before that answer arrives (a quick click, a reload, a second tab) must stay signed
 * in, and must not end their sessions elsewhere. In Chromium, against the real service.
 */
describe('the portal keeps its session when a page is left while renewing it', () => {
  let t: TestApp;
  let smtp: SmtpSink;
  let base: string;
  let browser: Browser;
  let person: Account;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    const port = await closedPort();
    base = `http://127.0.0.1:${port}`;
    t = await startApp({
      env: {
        DEPLOYMENT_MODE: 'managed',
        PUBLIC_BASE_URL: base,
        SMTP_URL: smtp.url,
        SESSION_REFRESH_REPEAT_MS: '10000',
      },
    });
    await t.app.listen(port, '127.0.0.1');
    person = await registerVerified(t, smtp);
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  async function signIn(page: Page): Promise<void> {
    await page.goto(`${base}/app/sign-in`);
    await page.getByLabel('Email address').fill(person.email);
    await page.getByLabel('Password').fill(person.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Documents' }).waitFor();
  }

  /** Opens `path` and leaves it as soon as its renewal is on the way, not waiting for the answer. */
  async function leaveMidRenewal(page: Page, path: string, leave: () => Promise<unknown>): Promise<void> {
    const sent = page.waitForRequest((request) => request.url().endsWith(RENEWAL));
    await page.goto(`${base}${path}`, { waitUntil: 'commit' });
    await sent;
    await leave();
  }

  /**
   * Reloads at once. Chromium may refuse the command for a moment just after a navigation committed
   * ("Not attached to an active page": the new document's page agent is not attached yet); the reload is
   * then sent again a moment later.
   */
  async function reloadNow(page: Page): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await page.reload({ waitUntil: 'commit' });
        return;
      } catch (error) {
        if (attempt === 5 || !/Not attached to an active page/.test(String(error))) throw error;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }

  const reuses = async () =>
    (
      await t.ds.query(`SELECT count(*)::int AS n FROM audit_log WHERE tenant_id = $1 AND action = $2`, [
        person.tenantId,
        'session.refresh_reuse',
      ])
    )[0].n as number;

  it('reloads, clicks and a second tab at machine speed: still signed in, no session ended', async () => {
    const probe = await openProbe(browser);
    try {
      await signIn(probe.page);
      for (let round = 0; round < 5; round++) {
        await leaveMidRenewal(probe.page, '/app/documents', () => reloadNow(probe.page));
        await leaveMidRenewal(probe.page, '/app/', () =>
          probe.page.goto(`${base}/app/profile`, { waitUntil: 'commit' }),
        );
      }
      // A second tab of the same browser opens while the first is renewing, then the first reloads.
      const second = await probe.context.newPage();
      await leaveMidRenewal(probe.page, '/app/documents', async () => {
        await second.goto(`${base}/app/profile`, { waitUntil: 'commit' });
        await reloadNow(probe.page);
      });

      for (const page of [probe.page, second]) {
        await page.goto(`${base}/app/profile`);
        await page.getByRole('button', { name: 'Sign out' }).waitFor();
        expect(await page.getByTestId('profile-facts').textContent()).toContain(person.email);
      }
      expect(await reuses()).toBe(0);
      // Pages aborted mid-load may log their cut-off requests; nothing else may go wrong.
      expect(probe.problems.filter((p) => !/Failed to fetch|net::ERR_ABORTED|AbortError/i.test(p))).toEqual([]);
    } finally {
      await probe.close();
    }
  }, 180_000);
});
