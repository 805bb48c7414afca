import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityProblems, launchBrowser, openProbe, type PageProbe } from './helpers/browser.js';

/**
 * The accessibility check every page test relies on must find what it is there to find: on the first
 * check of a document, on later checks of the same document (axe-core loaded once, as a single-page
 * application keeps its document), and again in a new document.
 */
describe('the accessibility check of the browser tests', () => {
  let browser: Browser;
  let probe: PageProbe;

  beforeAll(async () => {
    browser = await launchBrowser();
    probe = await openProbe(browser);
  }, 120_000);

  afterAll(async () => {
    await probe?.close();
    await browser?.close();
  });

  const BROKEN = `<!doctype html><html lang="en"><head><title>Broken</title></head><body><main>
    <h1>Broken</h1>
    <img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
    <button id="nameless"></button>
    <p style="color:#777;background:#888">Text that can hardly be read</p>
  </main></body></html>`;

  it('names serious findings on a first check, none once they are fixed in the same document', async () => {
    const { page } = probe;
    await page.setContent(BROKEN);
    const found = await accessibilityProblems(page);
    expect(found.map((line) => line.split(' ')[0]).sort()).toEqual(['button-name', 'color-contrast', 'image-alt']);
    expect(found.find((line) => line.startsWith('button-name'))).toContain('#nameless');

    // The same document, changed as a page changes itself: axe-core is already in it.
    expect(await page.evaluate('typeof window.axe')).toBe('object');
    await page.evaluate(`
      document.querySelector('img').setAttribute('alt', 'A dot');
      document.querySelector('#nameless').textContent = 'Save';
      document.querySelector('p').setAttribute('style', 'color:#000;background:#fff');
    `);
    expect(await accessibilityProblems(page)).toEqual([]);

    // A finding that appears later in the same document is found too.
    await page.evaluate(`document.querySelector('main').append(document.createElement('button'))`);
    expect((await accessibilityProblems(page)).map((line) => line.split(' ')[0])).toEqual(['button-name']);
  });

  it('checks a new document as it checks the first', async () => {
    const { page } = probe;
    await page.goto(`data:text/html,${encodeURIComponent(BROKEN)}`);
    expect(await page.evaluate('typeof window.axe')).toBe('undefined');
    expect((await accessibilityProblems(page)).map((line) => line.split(' ')[0]).sort()).toEqual([
      'button-name',
      'color-contrast',
      'image-alt',
    ]);
  });
});
