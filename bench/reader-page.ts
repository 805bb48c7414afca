import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { chromium, type Browser, type Page } from 'playwright-core';
import { webApp, webDistDir } from '../src/web/web-app.js';

/** The reader page open in Chromium, for the reader's benchmarks; `dir` holds the files they pick. */
export interface ReaderBench {
  browser: Browser;
  page: Page;
  /** A folder of the benchmark's own, removed by `close`; served to the page at /bench-files when asked. */
  dir: string;
  close(): Promise<void>;
}

/**
 * Serves a build of the pages (WEB_DIST, to compare another build in the same sitting, or dist/web) on
 * loopback and opens /app/read in Chromium. `onRequest` sees every address the page asks for, from the
 * page's own first load on.
 */
export async function openReader(options: {
  prefix: string;
  serveDir?: boolean;
  onRequest?: (url: string) => void;
}): Promise<ReaderBench> {
  const dir = mkdtempSync(join(tmpdir(), options.prefix));
  const app = express();
  if (options.serveDir) app.use('/bench-files', express.static(dir));
  const server = app.use(webApp(process.env.WEB_DIST ?? webDistDir())).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  const close = async (): Promise<void> => {
    await browser.close();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const page = await (await browser.newContext()).newPage();
    if (options.onRequest) page.on('request', (request) => options.onRequest!(request.url()));
    await page.goto(`${base}/app/read`);
    await page.getByRole('heading', { name: 'Read an SDF file' }).waitFor();
    return { browser, page, dir, close };
  } catch (error) {
    await close();
    throw error;
  }
}
