import { fork } from 'node:child_process';
import { PDFDocument } from 'pdf-lib';
import { render } from '../src/sdf/index.js';
import { invoiceWith } from '../src/sdf/testing/corpus.js';
import { legacyRender } from './legacy-render.js';

/**
 * render(), the document layouts, beside the renderer they replaced (every field as a `Key: value`
 * line, kept in bench/legacy-render.ts) in the same run, on the test invoice with 10, 1,000 and
 * 20,000 line items. Each measurement runs in a fresh process, so its peak RSS is its own, and the two
 * sides take turns, so a slow spell of a shared machine falls on both. The goal: the layouts within
 * twice the time of the old renderer.
 *
 *   npm run bench:render
 */

type Method = 'layout' | 'legacy';
interface Measurement {
  ms: number;
  bytes: number;
  pages: number;
  maxRssMb: number;
}

/** One measurement in this process: the time of one PDF of `items` line items, after a warm-up. */
async function measure(method: Method, items: number): Promise<void> {
  const data = invoiceWith(items);
  const make = method === 'layout' ? render : legacyRender;
  await make(invoiceWith(10)); // warm-up: font loading, code compilation
  const start = process.hrtime.bigint();
  const pdf = await make(data);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const pages = (await PDFDocument.load(pdf)).getPageCount();
  const result: Measurement = { ms, bytes: pdf.length, pages, maxRssMb: process.resourceUsage().maxRSS / 1024 };
  process.send!(result);
}

function inChild(method: Method, items: number): Promise<Measurement> {
  return new Promise((resolve, reject) => {
    const child = fork(process.argv[1]!, ['--phase', method, String(items)], { execArgv: process.execArgv });
    child.once('message', (message) => resolve(message as Measurement));
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`bench phase ${method} exited ${code}`));
    });
  });
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  // line items, rounds
  const sizes: [number, number][] = [
    [10, 7],
    [1_000, 5],
    [20_000, 3],
  ];
  const rows: string[] = [];
  for (const [items, rounds] of sizes) {
    const runs: Record<Method, Measurement[]> = { layout: [], legacy: [] };
    for (let round = 0; round < rounds; round++) {
      runs.layout.push(await inChild('layout', items));
      runs.legacy.push(await inChild('legacy', items));
    }
    const ratios = runs.layout.map((r, i) => r.ms / runs.legacy[i]!.ms);
    const line = (label: string, list: Measurement[]): string =>
      `  ${label.padEnd(16)} ${median(list.map((m) => m.ms))
        .toFixed(0)
        .padStart(7)} ms (median)   ` +
      `${String(list[0]!.pages).padStart(5)} pages, ${(list[0]!.bytes / 1024).toFixed(0).padStart(6)} KB   ` +
      `peak RSS ${Math.max(...list.map((m) => m.maxRssMb)).toFixed(0)} MB`;
    const ratio = median(ratios);
    rows.push(
      `${items} line items:`,
      line('layouts', runs.layout),
      line('Key: value lines', runs.legacy),
      `  time ratio       ${ratio.toFixed(2).padStart(7)}x the old renderer's (median of ${rounds} alternating rounds; goal at most 2x) ${ratio <= 2 ? 'ok' : 'OVER'}`,
    );
  }
  process.stdout.write(`${rows.join('\n')}\n`);
}

if (process.argv[2] === '--phase') {
  await measure(process.argv[3] as Method, Number(process.argv[4]));
} else {
  await main();
}
