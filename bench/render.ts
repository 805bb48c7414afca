import { fork } from 'node:child_process';
import { PDFDocument, rgb } from 'pdf-lib';
import { render } from '../src/sdf/index.js';
import { embedFont, linesOf } from '../src/sdf/producer/render.js';
import { invoiceWith } from '../src/sdf/testing/corpus.js';

/**
 * render() beside a baseline in the same run: pdf-lib's own text drawing of the same lines with the
 * same embedded font (`drawText` with `maxWidth`, one call a line), the way a producer writes a PDF
 * with pdf-lib unaided. Each measurement runs in a fresh process, so its peak RSS is its own, and the
 * two sides take turns, so a slow spell of a shared machine falls on both.
 *
 *   npm run bench:render
 */

type Method = 'render' | 'baseline';
interface Measurement {
  ms: number;
  bytes: number;
  pages: number;
  maxRssMb: number;
}

async function baseline(data: Record<string, unknown>): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await embedFont(doc);
  const margin = 56;
  let page = doc.addPage([595.28, 841.89]);
  let y = page.getHeight() - margin;
  for (const line of linesOf(data)) {
    const x = margin + line.indent * 14;
    const maxWidth = Math.max(page.getWidth() - margin - x, 48);
    // drawText wraps by itself; count the rows first so a line never straddles a page. render()'s leading.
    const height = 14;
    const rows = Math.max(1, Math.ceil(font.widthOfTextAtSize(line.text, 10) / maxWidth));
    if (y - rows * height < margin) {
      page = doc.addPage([595.28, 841.89]);
      y = page.getHeight() - margin;
    }
    page.drawText(line.text, { x, y, size: 10, font, maxWidth, lineHeight: height, color: rgb(0.1, 0.1, 0.1) });
    y -= rows * height;
  }
  return Buffer.from(await doc.save({ useObjectStreams: true }));
}

/** One measurement in this process: the time of one PDF of `items` line items, after a warm-up. */
async function measure(method: Method, items: number): Promise<void> {
  const data = invoiceWith(items);
  const make = method === 'render' ? render : baseline;
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
    [100, 7],
    [1_000, 5],
    [5_000, 3],
  ];
  const rows: string[] = [];
  for (const [items, rounds] of sizes) {
    const runs: Record<Method, Measurement[]> = { render: [], baseline: [] };
    for (let round = 0; round < rounds; round++) {
      runs.render.push(await inChild('render', items));
      runs.baseline.push(await inChild('baseline', items));
    }
    const ratios = runs.render.map((r, i) => runs.baseline[i]!.ms / r.ms);
    const line = (label: string, list: Measurement[]): string =>
      `  ${label.padEnd(10)} ${median(list.map((m) => m.ms))
        .toFixed(0)
        .padStart(7)} ms (median)   ` +
      `${list[0]!.pages} pages, ${(list[0]!.bytes / 1024).toFixed(0)} KB   ` +
      `peak RSS ${Math.max(...list.map((m) => m.maxRssMb)).toFixed(0)} MB`;
    rows.push(
      `${items} line items (${linesOf(invoiceWith(items)).length} lines):`,
      line('render()', runs.render),
      line('baseline', runs.baseline),
      `  ratio      ${median(ratios).toFixed(1).padStart(7)}x faster (median of ${rounds} alternating rounds)`,
    );
  }
  process.stdout.write(`${rows.join('\n')}\n`);
}

if (process.argv[2] === '--phase') {
  await measure(process.argv[3] as Method, Number(process.argv[4]));
} else {
  await main();
}
