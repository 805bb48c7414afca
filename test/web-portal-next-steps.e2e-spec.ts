import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { PASSWORD, bearer, login, mailTo, register, uniqueEmail } from './helpers/accounts.js';
import {
  accessibilityProblems,
  launchBrowser,
  openProbe,
  screenshot,
  signOutFromHeader,
  type PageProbe,
} from './helpers/browser.js';
import { closedPort } from './helpers/saml-idp.js';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';
import { StripeStandIn } from './helpers/stripe-stand-in.js';

const SECRET_KEY = 'sk_test_next_steps_0123456789';
const WEBHOOK_SECRET = 'whsec_next_steps_0123456789abcdef';
const NEW_PASSWORD = 'another long passphrase 58';

/** The first link of a mail (the service writes PUBLIC_BASE_URL, which is this test's server). */
const linkIn = (mail: { text: string }) => /https?:\/\/\S+/.exec(mail.text)![0];

/**
 * The pages a customer reaches at the end of something (a mailed link, Stripe Checkout) each say what
 * happened and offer the next step as a button; the plan page shows Stripe's prices and the current
 * plan, and every page names the plan the same way.
 */
describe('the portal leads on: confirmation pages, the return from Checkout, plans with prices', () => {
  let t: TestApp;
  let smtp: SmtpSink;
  let stripe: StripeStandIn;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    stripe = await new StripeStandIn({
      secretKey: SECRET_KEY,
      webhookSecret: WEBHOOK_SECRET,
      prices: {
        price_developer_n: { unit_amount: 1900, currency: 'eur', interval: 'month' },
        price_team_n: { unit_amount: 9900, currency: 'eur', interval: 'month' },
        price_business_n: { unit_amount: 399000, currency: 'eur', interval: 'year' },
      },
    }).start();
    const port = await closedPort();
    base = `http://127.0.0.1:${port}`;
    t = await startApp({
      env: {
        DEPLOYMENT_MODE: 'managed',
        PUBLIC_BASE_URL: base,
        SMTP_URL: smtp.url,
        STRIPE_SECRET_KEY: SECRET_KEY,
        STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        STRIPE_PRICE_DEVELOPER: 'price_developer_n',
        STRIPE_PRICE_TEAM: 'price_team_n',
        STRIPE_PRICE_BUSINESS: 'price_business_n',
        // The documented return address, as the stand-ins set it.
        STRIPE_RETURN_URL: `${base}/app/billing`,
        STRIPE_API_BASE: stripe.base,
        AUTH_FAILURE_LIMIT: '100000',
        // Free allows 20 requests a minute and the plan page polls after a payment.
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
    await smtp?.close();
  });

  const main = (page: Page) => page.getByRole('main');
  const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });

  async function accessible(page: Page): Promise<void> {
    expect(await accessibilityProblems(page)).toEqual([]);
  }

  /** 1280 px keeps the name; 375 px adds `-narrow`. */
  const shot = (page: Page, width: number, name: string) => screenshot(page, width === 1280 ? name : `${name}-narrow`);

  async function signIn(page: Page, email: string, password = PASSWORD): Promise<void> {
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Documents' }).waitFor();
  }

  /** A problem list without the refusals a test provokes on purpose (a 401 before the session is restored). */
  const unexpected = (probe: PageProbe) => probe.problems.filter((p) => !/status of 401/.test(p));

  for (const width of [1280, 375]) {
    it(`after confirming an address: "Sign in", or "Go to your documents" when signed in, at ${width} px`, async () => {
      const probe = await openProbe(browser, { width });
      const { page } = probe;
      try {
        // Signed out: the next step is signing in.
        const first = await register(t, { keepPlan: true });
        await page.goto(linkIn(await mailTo(smtp, first.email)));
        await expect.poll(() => page.getByTestId('verify-state').getAttribute('data-state')).toBe('verified');
        const signInButton = main(page).getByRole('link', { name: 'Sign in' });
        await signInButton.waitFor();
        expect(await signInButton.getAttribute('class')).toContain('button');
        await accessible(page);
        await shot(page, width, 'portal-email-confirmed');
        await signInButton.click();
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();

        // Signed in (an account may sign in before confirming): the next step is the documents.
        const second = await register(t, { keepPlan: true });
        await signIn(page, second.email);
        await page.goto(linkIn(await mailTo(smtp, second.email)));
        await expect.poll(() => page.getByTestId('verify-state').getAttribute('data-state')).toBe('verified');
        await main(page).getByRole('link', { name: 'Go to your documents' }).click();
        await page.getByRole('heading', { name: 'Documents' }).waitFor();
        expect(unexpected(probe)).toEqual([]);
      } finally {
        await probe.close();
      }
    }, 90_000);

    it(`after accepting an invitation and after a new password: a "Sign in" button, at ${width} px`, async () => {
      const owner = await register(t, { keepPlan: true });
      await t
        .http()
        .post('/v1/auth/verify-email')
        .send({ token: new URL(linkIn(await mailTo(smtp, owner.email))).searchParams.get('token') })
        .expect(200);
      const tokens = await login(t, owner.email);
      const invitee = uniqueEmail(`invitee-${width}`);
      await t
        .http()
        .post('/v1/account/team/invitations')
        .set(bearer(tokens))
        .send({ email: invitee, role: 'member' })
        .expect(201);
      const probe = await openProbe(browser, { width });
      const { page } = probe;
      try {
        await page.goto(linkIn(await mailTo(smtp, invitee)));
        await page.getByLabel('Your name').fill('Grace Hopper');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Accept the invitation' }).click();
        await page.getByTestId('joined').waitFor();
        await accessible(page);
        await shot(page, width, 'portal-invitation-accepted');
        await main(page).getByRole('link', { name: 'Sign in' }).click();
        await signIn(page, invitee);

        // A new password, from the mailed link: the page ends with the way back in.
        await signOutFromHeader(page);
        await t.http().post('/v1/auth/password/forgot').send({ email: invitee }).expect(202);
        await page.goto(linkIn(await mailTo(smtp, invitee, 2)));
        await page.getByLabel('Password').fill(NEW_PASSWORD);
        await page.getByRole('button', { name: 'Set the new password' }).click();
        await page.getByTestId('reset-done').waitFor();
        await accessible(page);
        await shot(page, width, 'portal-password-changed');
        await main(page).getByRole('link', { name: 'Sign in' }).click();
        await signIn(page, invitee, NEW_PASSWORD);
        expect(unexpected(probe)).toEqual([]);
      } finally {
        await probe.close();
      }
    }, 90_000);

    it(`plans with Stripe's prices, the current plan marked; a cancelled and a paid checkout come back to /app/billing and say so, at ${width} px`, async () => {
      const owner = await register(t, { keepPlan: true });
      await t
        .http()
        .post('/v1/auth/verify-email')
        .send({ token: new URL(linkIn(await mailTo(smtp, owner.email))).searchParams.get('token') })
        .expect(200);
      const probe = await openProbe(browser, { width });
      const { page } = probe;
      try {
        await page.goto(`${base}/app/sign-in`);
        await signIn(page, owner.email);
        const openSection = async (name: string) => {
          if (width === 1280 || (await nav(page).getByRole('link', { name }).isVisible())) {
            await nav(page).getByRole('link', { name }).click();
          } else {
            await page.goto(`${base}/app/${name.toLowerCase()}`);
          }
        };
        await openSection('Plan');
        const row = (plan: string) => page.locator(`[data-testid="plan-row"][data-plan="${plan}"]`);
        const price = (plan: string) => row(plan).getByTestId('plan-price');
        await expect.poll(() => price('team').textContent()).toMatch(/€\s?99\.00\s+a month/);
        expect(await price('developer').textContent()).toMatch(/€\s?19\.00\s+a month/);
        expect(await price('business').textContent()).toMatch(/€\s?3,990\.00\s+a year/);
        expect(await price('free').textContent()).toBe('No charge');
        expect(await price('enterprise').textContent()).toBe('Agreed with us');
        // The current plan: marked in words and for assistive technology, on its row only.
        // The plans may come before the organisation's plan: no row is marked until it is read, then one.
        await expect.poll(() => row('free').getByText('Current plan').count()).toBe(1);
        expect(await page.getByText('Current plan').count()).toBe(1);
        expect(await row('free').getAttribute('aria-current')).toBe('true');
        expect(await page.getByTestId('current-plan').textContent()).toContain('You are on Free');
        await accessible(page);
        await shot(page, width, 'portal-plan');

        // Checkout left without paying: back on /app/billing, told nothing changed, with a way on.
        await page.getByRole('button', { name: 'Upgrade to Developer' }).click();
        await page.getByRole('link', { name: 'Cancel and go back' }).click();
        await page.waitForURL(`${base}/app/billing?checkout=cancel`);
        const result = page.getByTestId('checkout-result');
        await expect.poll(() => result.getAttribute('data-result')).toBe('cancelled');
        expect(await result.textContent()).toContain('nothing was charged');
        await main(page).getByRole('link', { name: 'Go to your documents' }).waitFor();
        // The page loads anew on the return: the plan shows once it is read.
        await expect.poll(() => row('free').getAttribute('aria-current')).toBe('true');
        await accessible(page);

        // Paid: back on /app/billing, told so, and the plan follows once Stripe's event arrives.
        await page.getByRole('button', { name: 'Upgrade to Team' }).click();
        await page.getByRole('button', { name: 'Pay with a test card' }).click();
        await page.waitForURL(`${base}/app/billing?checkout=success`);
        await expect.poll(() => result.getAttribute('data-result')).toBe('paid');
        await expect.poll(() => result.textContent(), { timeout: 20_000 }).toContain('you are on Team now');
        await row('team').getByText('Current plan').waitFor();
        expect(await page.getByTestId('current-plan').textContent()).toContain('You are on Team');
        // The menu marks Plan as the section shown, under this address too (on a phone, inside the menu).
        const planLink = page
          .getByRole('navigation', { name: 'Main', includeHidden: true })
          .getByRole('link', { name: 'Plan', exact: true, includeHidden: true });
        expect(await planLink.getAttribute('aria-current')).toBe('page');
        await accessible(page);
        await shot(page, width, 'portal-billing-return');

        // The same name on every page that names the plan.
        await openSection('Usage');
        await expect.poll(() => page.getByTestId('plan-name').textContent()).toContain('Plan: Team,');
        await openSection('Settings');
        await expect.poll(() => page.getByTestId('organisation-plan').textContent()).toBe('Team');

        await page.goto(`${base}/app/billing?checkout=success`);
        await main(page).getByRole('link', { name: 'Go to your documents' }).click();
        await page.getByRole('heading', { name: 'Documents' }).waitFor();
        expect(unexpected(probe)).toEqual([]);
      } finally {
        await probe.close();
      }
    }, 120_000);
  }
});
