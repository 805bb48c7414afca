/**
 * Plots of the benchmarks' figures as small standalone SVG files, drawn from what a benchmark prints, so
 * docs/benchmarks.md can show them:
 *
 *   node dist/bench/plot.js upload <printed output of bench:upload> [out dir, default docs/plots]
 *
 * `npm run bench:upload` draws its own plots the same way at the end of each run.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Series {
  name: string;
  points: [number, number][];
  /** Drawn dashed: a reference rather than the thing measured. */
  reference?: boolean;
}

export interface LineChart {
  title: string;
  /** What the plot shows, in words, for readers that do not see it. */
  description: string;
  xLabel: string;
  yLabel: string;
  xTicks: number[];
  series: Series[];
}

const WIDTH = 640;
const HEIGHT = 360;
const PAD = { left: 64, right: 180, top: 40, bottom: 52 };
const COLORS = ['#6b7280', '#1d4ed8', '#b45309', '#047857', '#7c3aed'];

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
const num = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

/** A round step for about five grid lines up to `max`. */
function niceStep(max: number): number {
  const rough = max / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= rough)!;
}

/** A line chart with a logarithmic x axis (client counts double and more between levels). */
export function lineChart(c: LineChart): string {
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const xs = c.xTicks.map(Math.log2);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  const x = (v: number) => PAD.left + ((Math.log2(v) - x0) / (x1 - x0 || 1)) * plotW;
  const yMaxData = Math.max(...c.series.flatMap((s) => s.points.map(([, y]) => y)));
  const step = niceStep(yMaxData);
  const yMax = Math.ceil(yMaxData / step) * step;
  const y = (v: number) => PAD.top + plotH - (v / yMax) * plotH;

  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-labelledby="title desc" font-family="sans-serif" font-size="12">`,
    `<title id="title">${esc(c.title)}</title>`,
    `<desc id="desc">${esc(c.description)}</desc>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${PAD.left}" y="24" font-size="14" font-weight="bold" fill="#111827">${esc(c.title)}</text>`,
  ];
  for (let v = 0; v <= yMax + step / 2; v += step) {
    out.push(
      `<line x1="${PAD.left}" x2="${PAD.left + plotW}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#e5e7eb"/>`,
      `<text x="${PAD.left - 8}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" fill="#374151">${num(v)}</text>`,
    );
  }
  for (const t of c.xTicks) {
    out.push(
      `<line x1="${x(t).toFixed(1)}" x2="${x(t).toFixed(1)}" y1="${PAD.top}" y2="${PAD.top + plotH}" stroke="#f3f4f6"/>`,
      `<text x="${x(t).toFixed(1)}" y="${PAD.top + plotH + 18}" text-anchor="middle" fill="#374151">${t}</text>`,
    );
  }
  out.push(
    `<line x1="${PAD.left}" x2="${PAD.left + plotW}" y1="${PAD.top + plotH}" y2="${PAD.top + plotH}" stroke="#374151"/>`,
    `<line x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${PAD.top + plotH}" stroke="#374151"/>`,
    `<text x="${PAD.left + plotW / 2}" y="${HEIGHT - 12}" text-anchor="middle" fill="#111827">${esc(c.xLabel)}</text>`,
    `<text transform="translate(16 ${PAD.top + plotH / 2}) rotate(-90)" text-anchor="middle" fill="#111827">${esc(c.yLabel)}</text>`,
  );
  c.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const dash = s.reference ? ' stroke-dasharray="6 4"' : '';
    const pts = s.points.map(([px, py]) => `${x(px).toFixed(1)},${y(py).toFixed(1)}`).join(' ');
    out.push(
      `<polyline class="series" data-name="${esc(s.name)}" points="${pts}" fill="none" stroke="${color}" stroke-width="2"${dash}/>`,
    );
    for (const [px, py] of s.points) {
      out.push(
        `<circle cx="${x(px).toFixed(1)}" cy="${y(py).toFixed(1)}" r="3" fill="${color}"><title>${esc(s.name)}: ${num(py)} at ${px}</title></circle>`,
      );
    }
    const ly = PAD.top + 10 + i * 20;
    const lx = PAD.left + plotW + 16;
    out.push(
      `<line x1="${lx}" x2="${lx + 24}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"${dash}/>`,
      `<text x="${lx + 30}" y="${ly + 4}" fill="#111827">${esc(s.name)}</text>`,
    );
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/** One row of bench:upload's printed table. */
export interface UploadLevel {
  clients: number;
  baseline: number;
  alone: number;
  toValid: number;
}

export interface UploadRun {
  layout: 'all' | 'api-worker';
  label: string;
  levels: UploadLevel[];
}

/**
 * The tables bench:upload prints: a layout's label line, a header, then one row per client count
 * (`clients | baseline up/s | upload up/s ratio p50 p99 | to-valid up/s ratio p50 p99 p99/p50`).
 */
export function parseUploadOutput(text: string): UploadRun[] {
  const runs: UploadRun[] = [];
  for (const line of text.split('\n')) {
    if (/^one process \(/.test(line)) runs.push({ layout: 'all', label: line.trim(), levels: [] });
    else if (/^two processes \(/.test(line)) runs.push({ layout: 'api-worker', label: line.trim(), levels: [] });
    const row = /^\s*(\d+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s[^|]*\|\s*([\d.]+)\s/.exec(line);
    if (row && runs.length > 0) {
      const [clients, baseline, alone, toValid] = row.slice(1).map(Number);
      runs[runs.length - 1].levels.push({ clients, baseline, alone, toValid });
    }
  }
  return runs.filter((r) => r.levels.length > 0);
}

/** Uploads/s against clients, the bare server beside the service, one plot per process layout. */
export function uploadPlots(runs: UploadRun[]): { file: string; svg: string }[] {
  return runs.map((run) => {
    const pts = (f: (l: UploadLevel) => number) => run.levels.map((l) => [l.clients, f(l)] as [number, number]);
    const layout = run.layout === 'all' ? 'one process' : 'api and worker processes';
    return {
      file: `upload-${run.layout}.svg`,
      svg: lineChart({
        title: `Uploads per second against clients (${layout})`,
        description:
          `bench:upload, ${layout}: ` +
          run.levels
            .map(
              (l) =>
                `${l.clients} clients: bare server ${num(l.baseline)}, upload ${num(l.alone)}, to valid ${num(l.toValid)}`,
            )
            .join('; '),
        xLabel: 'concurrent clients',
        yLabel: 'uploads per second',
        xTicks: run.levels.map((l) => l.clients),
        series: [
          { name: 'bare HTTP server', points: pts((l) => l.baseline), reference: true },
          { name: 'upload (201)', points: pts((l) => l.alone) },
          { name: 'upload to valid', points: pts((l) => l.toValid) },
        ],
      }),
    };
  });
}

/** The project's docs/plots, from dist/bench/ or bench/. */
export const DEFAULT_PLOT_DIR = fileURLToPath(
  new URL(import.meta.url.includes('/dist/') ? '../../docs/plots' : '../docs/plots', import.meta.url),
);

export function writePlots(plots: { file: string; svg: string }[], dir = DEFAULT_PLOT_DIR): string[] {
  mkdirSync(dir, { recursive: true });
  return plots.map(({ file, svg }) => {
    writeFileSync(join(dir, file), svg);
    return join(dir, file);
  });
}

if (process.argv[1] && import.meta.url === new URL(`file://${resolve(process.argv[1])}`).href) {
  const [kind, input, outDir] = process.argv.slice(2);
  if (kind !== 'upload' || !input) {
    process.stderr.write('usage: node dist/bench/plot.js upload <printed output of bench:upload> [out dir]\n');
    process.exit(2);
  }
  const runs = parseUploadOutput(readFileSync(input, 'utf8'));
  if (runs.length === 0) {
    process.stderr.write(`no bench:upload table in ${input}\n`);
    process.exit(1);
  }
  for (const file of writePlots(uploadPlots(runs), outDir ? resolve(outDir) : undefined)) {
    process.stdout.write(`wrote ${file}\n`);
  }
}
