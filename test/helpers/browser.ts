import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import axe from 'axe-core';
import { chromium, type Browser, type BrowserContext, type Locator, type Page, type Request } from 'playwright-core';
import { expect } from 'vitest';

/** The rules every page is checked against: WCAG 2.0 and 2.1, levels A and AA. */
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/** Debian's Chromium (the `chromium` package); `.ci/run` installs it when it is missing. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where browser tests write their screenshots (the README shows them). */
export const SCREENSHOTS = join(process.cwd(), 'docs', 'screenshots');

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // As root Chromium needs --no-sandbox; the rest keeps it off the network it would otherwise call.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface PageProbe {
  context: BrowserContext;
  page: Page;
  /** Every request the page and its workers made. */
  requests: Request[];
  /** Console errors and Content-Security-Policy violations, page and workers alike. */
  problems: string[];
  close(): Promise<void>;
}

/** A fresh context and page (axe needs a page of `browser.newContext()`), watching what it does. */
export async function openProbe(
  browser: Browser,
  options: { width?: number; height?: number } = {},
): Promise<PageProbe> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 900 },
    acceptDownloads: true,
  });
  const page = await context.newPage();
  const requests: Request[] = [];
  const problems: string[] = [];
  context.on('request', (request) => requests.push(request));
  page.on('console', (message) => {
    // A failed load names its address only in the message's location: keep it, so a failure says what failed.
    const text = /^Failed to load resource/.test(message.text())
      ? `${message.text()} ${message.location().url}`
      : message.text();
    if (message.type() === 'error' || /Content.Security.Policy/i.test(text)) problems.push(text);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('worker', (worker) => {
    worker.on('console', (message) => {
      if (message.type() === 'error' || /Content.Security.Policy/i.test(message.text())) problems.push(message.text());
    });
  });
  // Violations are reported to the console, where the listeners above collect them.
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (event) => {
      console.error('CSP violation: ' + event.violatedDirective + ' ' + event.blockedURI);
    });`,
  });
  return { context, page, requests, problems, close: () => context.close() };
}

/**
 * Serious and critical axe findings on the page as it is now, as readable lines. axe runs in the page
 * itself, on the whole document, with every rule of AXE_TAGS. The front end has no frames; should it ever
 * get one, the check fails here rather than leave the frame unchecked.
 *
 * axe-core is loaded into a document once: the front end moves between its pages within one document,
 * so the checks after the first reuse it. Compiling its half a megabyte of source was most of what a
 * check cost the browser (about 0.6 s of CPU on a page of 50 elements, twice per check through
 * `@axe-core/playwright`), and a browser file runs dozens of checks. Only violations are collected in
 * full (`resultTypes`); which rules run and what they find is unchanged.
 */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  const otherFrames = page.frames().slice(1);
  expect(
    otherFrames.map((frame) => frame.url()),
    'frames axe would not check',
  ).toEqual([]);
  const loaded = await page.evaluate(`typeof window.axe?.run === 'function'`);
  if (!loaded) {
    await page.evaluate(`${axe.source};axe.configure({ allowedOrigins: ['<same_origin>'] });`);
  }
  const options = { runOnly: { type: 'tag', values: AXE_TAGS }, resultTypes: ['violations'] };
  const results = (await page.evaluate(`window.axe.run(document, ${JSON.stringify(options)})`)) as axe.AxeResults;
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Listens on a random loopback port and returns the base URL. */
export async function listen(app: {
  listen(port: number, host: string): Promise<unknown>;
  getUrl(): Promise<string>;
}): Promise<string> {
  await app.listen(0, '127.0.0.1');
  return (await app.getUrl()).replace('[::1]', '127.0.0.1');
}

/** Signs out from the header; on a phone-sized page through its menu button first. */
export async function signOutFromHeader(page: Page): Promise<void> {
  const menu = page.getByRole('banner').getByRole('button', { name: 'Menu' });
  if ((await menu.isVisible()) && (await menu.getAttribute('aria-expanded')) !== 'true') await menu.click();
  await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
}

/**
 * A link of the main navigation, ready to click: on a phone-sized page the sections are behind the
 * header's one menu button, which is opened first (as a person does).
 */
export async function mainNavLink(page: Page, name: string): Promise<Locator> {
  const menu = page.getByRole('banner').getByRole('button', { name: 'Menu' });
  if ((await menu.isVisible()) && (await menu.getAttribute('aria-expanded')) !== 'true') await menu.click();
  return page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name });
}
