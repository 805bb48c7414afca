import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { scannedInvoice, typicalInvoice } from '../src/sdf/testing/corpus.js';
import { validate } from '../src/sdf/validate.js';
import { webDistDir } from '../src/web/web-app.js';
import { percentile } from './harness.js';
import { openReader } from './reader-page.js';

/**
 * The reader's speed: the format core judging a file in Chromium's Web Worker (the page's own timing,
 * from handing the bytes over to the verdict) beside validate() in Node on the same bytes, in one run,
 * the two taking turns round by round, so the ratio holds on a noisy machine. Also the weight of the
 * page's JavaScript as first loaded.
 *
 *   npm run bench:reader        (WEB_DIST: another build of the pages than dist/web)
 */
const ROUNDS = { typical: 15, scan: 5 };

/** One validate() in Node, timed. */
async function nodeTime(bytes: Buffer): Promise<number> {
  const started = performance.now();
  await validate(bytes);
  return performance.now() - started;
}

/** The built pages: dist/web, or WEB_DIST (another build of them, to compare two in one sitting). */
const WEB_DIST = process.env.WEB_DIST ?? webDistDir();

function initialJavaScript(): { files: string[]; gzipBytes: number } {
  const dist = WEB_DIST;
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const files = [...html.matchAll(/(?:src|href)="\/app\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
  const gzipBytes = files.reduce((sum, file) => sum + gzipSync(readFileSync(join(dist, file))).length, 0);
  return { files, gzipBytes };
}

/**
 * The same worker script judging the same file in a Worker of its own, the page doing nothing else (no
 * file picked, nothing drawn or torn down, no progress shown), the bytes copied in before each round is
 * timed: what the format core itself takes in Chromium, apart from the page around it. Not the goal's
 * figure (that is the reader as a person meets it, above), but where the rest of its time is spent.
 */
function workerAlone(page: Page, workerUrl: string, file: string, rounds: number): Promise<number[]> {
  return page.evaluate(`(async () => {
    const bytes = new Uint8Array(await (await fetch('/bench-files/${file}')).arrayBuffer());
    const worker = new Worker(${JSON.stringify(workerUrl)}, { type: 'module' });
    const times = [];
    for (let i = 0; i <= ${rounds}; i++) {
      const copy = bytes.slice().buffer;
      const ms = await new Promise((resolve, reject) => {
        worker.onmessage = (event) => {
          if (event.data.type === 'done') resolve(event.data.workerMs);
          else if (event.data.type === 'crash') reject(new Error(event.data.message));
        };
        worker.postMessage({ bytes: copy }, [copy]);
      });
      if (i > 0) times.push(ms);
    }
    worker.terminate();
    return times;
  })()`);
}

async function main(): Promise<void> {
  const requested: string[] = [];
  // The files are also served to the page itself, for the worker measured on its own (workerAlone).
  const { page, dir, close } = await openReader({
    prefix: 'sdf-bench-reader-',
    serveDir: true,
    onRequest: (url) => requested.push(url),
  });
  try {
    const pdfBeforeAnyFile = requested.some((url) => /\/pdf[.-]/.test(url));

    const rows: string[] = [];
    for (const [label, make, rounds] of [
      ['typical invoice', typicalInvoice, ROUNDS.typical],
      ['scanned invoice', scannedInvoice, ROUNDS.scan],
    ] as const) {
      const bytes = await make();
      await validate(bytes); // warm-up: compiled schema, JIT
      const node: number[] = [];
      const browserTimes: number[] = [];
      const workerTimes: number[] = [];
      /** From the file picked to its verdict on screen, reading the file included (not part of the ratio). */
      const shownTimes: number[] = [];
      // Node and the browser take turns, a round each, so both sides meet the same load on a shared
      // machine. One browser round more than measured: the first loads the worker script and compiles it.
      for (let i = 0; i <= rounds; i++) {
        if (i > 0) node.push(await nodeTime(bytes));
        const name = `${label.replace(/\s/g, '-')}-${i}.sdf`;
        const path = join(dir, name);
        writeFileSync(path, bytes);
        await page.setInputFiles('#sdf-file', path);
        const result = page.locator(`[data-testid="reader-result"][data-file="${name}"]`);
        await result.waitFor({ timeout: 120_000 });
        if ((await result.getByTestId('verdict').getAttribute('data-valid')) !== 'true') {
          throw new Error(`${label}: the reader did not find the file valid`);
        }
        if (i > 0) {
          browserTimes.push(Number(await result.getAttribute('data-elapsed-ms')));
          workerTimes.push(Number(await result.getAttribute('data-worker-ms')));
          const shown = page.locator(`[data-testid="reader-result"][data-file="${name}"][data-shown-ms]`);
          await shown.waitFor({ timeout: 120_000 });
          shownTimes.push(Number(await shown.getAttribute('data-shown-ms')));
        }
        // The page then draws the PDF's pages in view; Node's round waits until they are, so neither side runs
        // beside it.
        await result.locator('.pdf-pages[aria-busy="false"] canvas').first().waitFor({ timeout: 120_000 });
      }
      const paired = node.map((t, k) => browserTimes[k]! / t).sort((a, b) => a - b);
      node.sort((a, b) => a - b);
      browserTimes.sort((a, b) => a - b);
      workerTimes.sort((a, b) => a - b);
      shownTimes.sort((a, b) => a - b);
      const nodeMedian = percentile(node, 50);
      const browserMedian = percentile(browserTimes, 50);
      const workerUrl = requested.find((url) => /\/reader-worker-[^/]+\.js$/.test(url));
      if (!workerUrl) throw new Error('the page did not load its validation worker');
      const alone = (await workerAlone(page, workerUrl, `${label.replace(/\s/g, '-')}-0.sdf`, rounds)).sort(
        (a, b) => a - b,
      );
      rows.push(
        `${label}: ${(bytes.length / 1024).toFixed(0)} KB, ${rounds} rounds`,
        `  validate() in Node   median ${nodeMedian.toFixed(1).padStart(8)} ms   p90 ${percentile(node, 90).toFixed(1)} ms`,
        `  reader in Chromium   median ${browserMedian.toFixed(1).padStart(8)} ms   p90 ${percentile(browserTimes, 90).toFixed(1)} ms`,
        `    of which in the worker  median ${percentile(workerTimes, 50).toFixed(1)} ms`,
        `  picked to verdict on screen (reading the file included) median ${percentile(shownTimes, 50).toFixed(1)} ms`,
        `  ratio                ${(browserMedian / nodeMedian).toFixed(2).padStart(8)}x (target: at most 2x); round by round, median ${percentile(paired, 50).toFixed(2)}x`,
        `  (the worker alone, nothing else in the page: median ${percentile(alone, 50).toFixed(1)} ms, ` +
          `${(percentile(alone, 50) / nodeMedian).toFixed(2)}x of Node's median)`,
      );
    }
    const js = initialJavaScript();
    const pdfLoaded = requested.some((url) => /\/pdf[.-]/.test(url));
    rows.push(
      `initial page JavaScript: ${(js.gzipBytes / 1024).toFixed(1)} KB gzip (${js.files.join(', ')})`,
      `pdf.js requested before a file was shown: ${pdfBeforeAnyFile ? 'yes' : 'no'}; after: ${pdfLoaded ? 'yes' : 'no'}`,
    );
    process.stdout.write(`${rows.join('\n')}\n`);
  } finally {
    await close();
  }
}

await main();
