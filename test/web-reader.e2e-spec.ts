import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCorpus, scannedInvoice, typicalInvoice, type CorpusFile } from '../src/sdf/testing/corpus.js';
import { pack } from '../src/sdf/producer/pack.js';
import { INVOICE_SCHEMA, invoiceData } from '../src/sdf/testing/build-sdf.js';
import { startApp, type TestApp } from './helpers/app.js';
import { accessibilityProblems, launchBrowser, listen, openProbe, screenshot } from './helpers/browser.js';
import { downloadFile, upload, waitForFinal } from './helpers/documents.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';

const run = promisify(execFile);
const CLI = join(process.cwd(), 'dist', 'src', 'cli', 'sdf.js');

interface Verdict {
  valid: boolean;
  checks: Record<string, string>;
  code: string | null;
  file: string | null;
  warnings: string[];
}

/** What `sdf validate --json` says of each file, from one run of the command over all of them. */
async function cliVerdicts(paths: string[]): Promise<Verdict[]> {
  const { stdout } = await run(process.execPath, [CLI, 'validate', '--json', ...paths], {
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  const results = JSON.parse(stdout) as {
    file: string;
    result: {
      valid: boolean;
      checks: Record<string, string>;
      warnings: string[];
      error?: { code: string; file?: string };
    };
  }[];
  expect(results.map((r) => r.file)).toEqual(paths);
  return results.map(({ result }) => ({
    valid: result.valid,
    checks: result.checks,
    code: result.error?.code ?? null,
    file: result.error?.file ?? null,
    warnings: result.warnings,
  }));
}

/** Picks `path` in the reader and waits for its verdict; returns what the page shows. */
async function readInPage(page: Page, path: string, name: string): Promise<Verdict> {
  await page.setInputFiles('#sdf-file', path);
  const result = page.locator(`[data-testid="reader-result"][data-file="${name}"]`);
  await result.waitFor({ timeout: 30_000 });
  const verdict = result.getByTestId('verdict');
  const checks: Record<string, string> = {};
  for (const item of await verdict.locator('[data-testid^="check-"]').all()) {
    const id = (await item.getAttribute('data-testid'))!.slice('check-'.length);
    checks[id] = (await item.getAttribute('data-status'))!;
  }
  const code = verdict.getByTestId('error-code');
  const file = verdict.getByTestId('error-file');
  return {
    valid: (await verdict.getAttribute('data-valid')) === 'true',
    checks,
    code: (await code.count()) ? await code.textContent() : null,
    file: (await file.count()) ? await file.textContent() : null,
    warnings: [
      ...(await Promise.all(
        (await verdict.getByTestId('warning').all()).map(async (item) => (await item.getAttribute('data-text'))!),
      )),
      // An untrusted key is said once, in the verdict's words, by the signer block (the core's warning last).
      ...(await Promise.all(
        (await verdict.locator('[data-testid="signer"][data-warning]').all()).map(
          async (item) => (await item.getAttribute('data-warning'))!,
        ),
      )),
    ],
  };
}

describe('the reader at /app/read: the format core in the browser', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let tenant: TenantFixture;
  let dir: string;
  let corpus: CorpusFile[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sdf-reader-'));
    t = await startApp();
    base = await listen(t.app);
    tenant = await createTenant(t);
    browser = await launchBrowser();
    const vectors = join(process.cwd(), 'test', 'vectors');
    const scan = await scannedInvoice();
    const flipped = Buffer.from(scan);
    flipped[Math.floor(flipped.length / 2)]! ^= 0x01;
    corpus = [
      ...(await formatCorpus()),
      ...readdirSync(vectors)
        .filter((name) => name.endsWith('.sdf'))
        .map((name) => ({ name: `test vector ${name}`, bytes: readFileSync(join(vectors, name)) })),
      { name: 'scanned invoice (20 MB)', bytes: scan },
      // Inflated into the memory the previous file's image left (the worker reuses it): one changed byte
      // of the image must still fail its CRC-32, and the same scan again must pass.
      { name: 'scanned invoice with one byte of its image changed', bytes: flipped },
      { name: 'scanned invoice again', bytes: scan },
    ];
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const write = (index: number, file: CorpusFile): { path: string; name: string } => {
    const name = `${String(index).padStart(2, '0')}-${file.name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}.sdf`;
    const path = join(dir, name);
    writeFileSync(path, file.bytes);
    return { path, name };
  };

  it('gives every file of the valid and hostile corpora the verdict, codes and warnings of `sdf validate --json`', async () => {
    const files = corpus.map((file, i) => ({ ...write(i, file), label: file.name }));
    const expected = await cliVerdicts(files.map((f) => f.path));
    const probe = await openProbe(browser);
    try {
      await probe.page.goto(`${base}/app/read`);
      const mismatches: string[] = [];
      for (const [i, file] of files.entries()) {
        const shown = await readInPage(probe.page, file.path, file.name);
        if (JSON.stringify(shown) !== JSON.stringify(expected[i])) {
          mismatches.push(`${file.label}: page ${JSON.stringify(shown)} != cli ${JSON.stringify(expected[i])}`);
        }
      }
      expect(mismatches).toEqual([]);
      // The PDFs that reach outside by themselves are valid and say so, each with its code; a link says nothing.
      const warningsOf = (label: string) => {
        const i = files.findIndex((f) => f.label === label);
        expect(expected[i], label).toMatchObject({ valid: true, checks: { pdf: 'pass' } });
        return expected[i]!.warnings;
      };
      expect(warningsOf('PDF that contacts an address when opened')).toEqual([
        'PDF_OPEN_ACTION_URI: visual.pdf contacts https://tracker.example as soon as it is opened',
      ]);
      expect(warningsOf('PDF whose page contacts an address when shown')).toEqual([
        'PDF_AUTO_ACTION_URI: visual.pdf contacts https://pixel.example without a click (additional action /O)',
      ]);
      expect(warningsOf('PDF with an embedded file')).toEqual([
        'PDF_EMBEDDED_FILE: visual.pdf embeds the file "factur-x.xml" (10 bytes)',
      ]);
      expect(warningsOf('PDF with a link a person clicks')).toEqual([]);
      const changed = files.findIndex((f) => f.label === 'scanned invoice with one byte of its image changed');
      expect(expected[changed]).toMatchObject({ valid: false, code: 'SDF_ERROR_INVALID_ARCHIVE' });
      expect(expected[changed + 1]).toMatchObject({ valid: true });
      const markup = files.findIndex((f) => f.label === 'signature whose signed_at is markup');
      expect(expected[markup]).toMatchObject({ valid: false, code: 'SDF_ERROR_INVALID_SIGNATURE' });
      // The corpus covers both outcomes and the hostile codes.
      const codes = new Set(expected.map((v) => v.code));
      for (const code of [
        null,
        'SDF_ERROR_NOT_ZIP',
        'SDF_ERROR_INVALID_ARCHIVE',
        'SDF_ERROR_ARCHIVE_TOO_LARGE',
        'SDF_ERROR_MISSING_FILE',
        'SDF_ERROR_INVALID_META',
        'SDF_ERROR_UNSUPPORTED_VERSION',
        'SDF_ERROR_INVALID_SCHEMA',
        'SDF_ERROR_INVALID_DATA',
        'SDF_ERROR_SCHEMA_MISMATCH',
        'SDF_ERROR_UNSAFE_PDF',
        'SDF_ERROR_INVALID_SIGNATURE',
      ]) {
        expect(codes, `corpus lacks ${code}`).toContain(code);
      }
      expect(probe.problems).toEqual([]);
    } finally {
      await probe.close();
    }
  }, 600_000);

  it('shows a signed invoice: the first page drawn, its number and total, the signature valid and trusted; the file never leaves the page', async () => {
    const { archive } = await pack({
      data: invoiceData(),
      schema: INVOICE_SCHEMA,
      meta: { document_type: 'invoice', issuer: 'Acme Supplies GmbH', issuer_id: 'DE123456789' },
    });
    const uploaded = await upload(t, tenant.apiKey, archive).expect(201);
    await waitForFinal(t, tenant.apiKey, uploaded.body.id);
    await t.http().post(`/sign/${uploaded.body.id}`).set('X-API-Key', tenant.apiKey).expect(202);
    await waitUntil(
      async () =>
        (await t.http().get(`/sdf/${uploaded.body.id}`).set('X-API-Key', tenant.apiKey)).body.status === 'signed',
      'signed',
      30_000,
    );
    const signed = await downloadFile(t, tenant.apiKey, uploaded.body.id);
    const path = join(dir, 'signed-invoice.sdf');
    writeFileSync(path, signed);

    const probe = await openProbe(browser);
    try {
      const jwks = `${base}/.well-known/sdf-keys/${tenant.slug}`;
      await probe.page.goto(`${base}/app/read?jwks=${encodeURIComponent(jwks)}`);
      // A key list named by a link waits for the person's yes.
      await probe.page.getByRole('button', { name: `Fetch keys from ${base}` }).click();
      await expect.poll(() => probe.page.getByTestId('trust-status').textContent()).toContain('key');
      await screenshot(probe.page, 'reader-empty');
      const verdict = await readInPage(probe.page, path, 'signed-invoice.sdf');
      expect(verdict).toMatchObject({ valid: true, code: null });
      expect(verdict.checks.signature).toBe('pass');
      const summary = probe.page.getByTestId('summary');
      await expect.poll(() => summary.textContent()).toContain('INV-2026-00142');
      expect(await summary.textContent()).toMatch(/1,713\.60/);
      // Its date as the documents pages write one, not as data.json holds it.
      expect(await summary.textContent()).toContain('Mar 15, 2026');
      expect(await summary.textContent()).not.toContain('2026-03-15');
      // The first page is drawn: its canvas holds pixels that are not white.
      const canvas = probe.page.locator('canvas[data-page="1"]');
      await canvas.waitFor();
      await expect.poll(() => probe.page.getByText('1 of 1 page drawn').count(), { timeout: 20_000 }).toBe(1);
      const inked = await probe.page.evaluate(
        `(() => {
          const node = document.querySelector('canvas[data-page="1"]');
          const pixels = node.getContext('2d').getImageData(0, 0, node.width, node.height).data;
          let dark = 0;
          for (let i = 0; i < pixels.length; i += 4) if (pixels[i] + pixels[i + 1] + pixels[i + 2] < 600) dark++;
          return dark;
        })()`,
      );
      expect(inked).toBeGreaterThan(100);
      // The text layer carries the PDF's text, selectable.
      await expect.poll(() => probe.page.locator('.textLayer').first().textContent()).toContain('INV-2026-00142');
      await screenshot(probe.page, 'reader-signed-invoice');
      await probe.page.getByRole('tab', { name: 'Signature' }).click();
      expect(await probe.page.getByTestId('signature-valid').textContent()).toBe('Valid');
      expect(await probe.page.getByTestId('signature-trusted').textContent()).toBe('Trusted');
      expect(await probe.page.getByTestId('trust-source').textContent()).toContain(jwks);
      expect(await accessibilityProblems(probe.page)).toEqual([]);
      // Nothing but GETs left the page, and none of them carried the file.
      const sent = probe.requests.filter((r) => r.method() !== 'GET' || (r.postDataBuffer()?.length ?? 0) > 0);
      expect(sent.map((r) => `${r.method()} ${r.url()}`)).toEqual([]);
      expect(probe.requests.every((r) => new URL(r.url()).origin === base)).toBe(true);
      expect(probe.problems).toEqual([]);
    } finally {
      await probe.close();
    }
  }, 120_000);

  it('draws a long invoice page by page as it comes into view: 44 pages laid out, a few drawn, the last drawn once scrolled to', async () => {
    const path = join(dir, 'long-invoice.sdf');
    writeFileSync(path, await typicalInvoice());
    const probe = await openProbe(browser);
    try {
      await probe.page.goto(`${base}/app/read`);
      expect(await readInPage(probe.page, path, 'long-invoice.sdf')).toMatchObject({ valid: true, code: null });
      const pages = probe.page.locator('.pdf-pages');
      await pages.locator('canvas[data-page="1"]').waitFor({ timeout: 20_000 });
      await expect.poll(() => pages.getAttribute('aria-busy'), { timeout: 20_000 }).toBe('false');
      // Every page has its place and caption from the start; only those near the view have a canvas.
      expect(await pages.locator('figure').count()).toBe(44);
      expect(await probe.page.getByText('Page 44 of 44').count()).toBe(1);
      const drawnAtFirst = await pages.locator('canvas').count();
      expect(drawnAtFirst).toBeGreaterThanOrEqual(1);
      expect(drawnAtFirst).toBeLessThan(10);
      expect(
        await probe.page.getByText(`${drawnAtFirst} of 44 pages drawn, the others as they come into view`).count(),
      ).toBe(1);
      expect(await pages.locator('canvas[data-page="44"]').count()).toBe(0);

      await probe.page.getByText('Page 44 of 44').scrollIntoViewIfNeeded();
      await pages.locator('canvas[data-page="44"]').waitFor({ timeout: 20_000 });
      await expect.poll(() => pages.getAttribute('aria-busy'), { timeout: 20_000 }).toBe('false');
      // The pages between were passed over, not drawn.
      const drawnAfter = await pages.locator('canvas').count();
      expect(drawnAfter).toBeGreaterThan(drawnAtFirst);
      expect(drawnAfter).toBeLessThan(20);
      await expect.poll(() => pages.locator('.textLayer').last().textContent()).not.toBe('');
      expect(await accessibilityProblems(probe.page)).toEqual([]);
      expect(probe.problems).toEqual([]);
    } finally {
      await probe.close();
    }
  }, 120_000);

  it('shows one file after another with the same pdf.js and data workers: each started once, none ended', async () => {
    const probe = await openProbe(browser);
    try {
      const started: string[] = [];
      const ended: string[] = [];
      const kind = (url: string): string =>
        /\/pdf\.worker[.-]/.test(url)
          ? 'pdf.js'
          : /\/data-worker-/.test(url)
            ? 'data'
            : /\/reader-worker-/.test(url)
              ? 'reader'
              : url;
      probe.page.on('worker', (worker) => {
        started.push(kind(worker.url()));
        worker.on('close', () => ended.push(kind(worker.url())));
      });
      await probe.page.goto(`${base}/app/read`);
      const bytes = await typicalInvoice();
      for (let i = 0; i < 3; i++) {
        const name = `one-after-another-${i}.sdf`;
        writeFileSync(join(dir, name), bytes);
        expect(await readInPage(probe.page, join(dir, name), name)).toMatchObject({ valid: true, code: null });
        // Shown in full before the next: the first page drawn, the data read by its worker.
        const result = probe.page.locator(`[data-testid="reader-result"][data-file="${name}"]`);
        await result.locator('.pdf-pages[aria-busy="false"] canvas[data-page="1"]').waitFor({ timeout: 20_000 });
        await expect.poll(() => result.getByTestId('summary').textContent()).toContain('INV-');
      }
      expect(started.sort()).toEqual(['data', 'pdf.js', 'reader']);
      expect(ended).toEqual([]);
      expect(probe.problems).toEqual([]);
    } finally {
      await probe.close();
    }
  }, 120_000);

  it('ends a ZIP bomb and a regex-bomb schema with their codes while the page keeps answering; refused files are explained', async () => {
    const files = corpus.filter((f) => f.name.startsWith('ZIP bomb') || f.name === 'regex-bomb schema');
    expect(files).toHaveLength(2);
    const probe = await openProbe(browser, { width: 375, height: 800 });
    try {
      await probe.page.goto(`${base}/app/read`);
      const bomb = write(90, files[0]!);
      expect(await readInPage(probe.page, bomb.path, bomb.name)).toMatchObject({ code: 'SDF_ERROR_ARCHIVE_TOO_LARGE' });
      const regex = write(91, files[1]!);
      await probe.page.setInputFiles('#sdf-file', regex.path);
      await probe.page.getByTestId('reader-progress').waitFor();
      // While the worker is stuck in the pattern, the page still answers: a disclosure opens at once.
      const details = probe.page.locator('details.trust-details');
      await details.locator('summary').click();
      expect(await details.getAttribute('open')).not.toBeNull();
      // A check that takes its time names the stage it is in (the pattern runs on the data), over a moving bar.
      const progress = probe.page.getByTestId('reader-progress');
      await progress.getByRole('progressbar', { name: 'Checking the file' }).waitFor({ timeout: 10_000 });
      expect(await progress.textContent()).toContain('Checking the data…');
      const result = probe.page.locator(`[data-testid="reader-result"][data-file="${regex.name}"]`);
      await result.waitFor({ timeout: 30_000 });
      expect(await result.getByTestId('error-code').textContent()).toBe('SDF_ERROR_INVALID_SCHEMA');
      expect(await result.getByTestId('error-file').textContent()).toBe('schema.json');
      await screenshot(probe.page, 'reader-refused-narrow');
      expect(await accessibilityProblems(probe.page)).toEqual([]);
      // Nothing scrolls sideways at 375 px.
      expect(await probe.page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      expect(probe.problems).toEqual([]);
    } finally {
      await probe.close();
    }
  }, 120_000);
});
