import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lineChart, parseUploadOutput, uploadPlots } from '../bench/plot.js';
import { projectRoot } from './helpers/processes.js';

const read = (path: string) => readFileSync(join(projectRoot, path), 'utf8');

/** A row as bench:upload prints it. */
function printedRow(clients: number, baseline: number, alone: number, toValid: number): string {
  const f = (n: number, w: number, d = 1) => n.toFixed(d).padStart(w);
  return [
    String(clients).padStart(7),
    f(baseline, 13),
    `${f(alone, 11)} ${f(alone / baseline, 6, 2)} ${f(12.3, 7)} ${f(45.6, 7)}`,
    `${f(toValid, 13)} ${f(toValid / baseline, 6, 2)} ${f(20.1, 7)} ${f(60.2, 7)} ${f(3, 8, 2)}`,
  ].join(' | ');
}

describe('benchmark plots', () => {
  it("reads bench:upload's printed tables back, per layout", () => {
    const levels = [1, 8, 32, 64].map((clients) => ({
      clients,
      baseline: Math.round(300 + Math.random() * 1000) + 0.5,
      alone: Math.round(50 + Math.random() * 300) + 0.2,
      toValid: Math.round(50 + Math.random() * 300) + 0.7,
    }));
    const header = 'clients | baseline up/s | upload up/s  ratio  p50 ms  p99 ms | to-valid up/s  ratio ...';
    const text = [
      'file: 102811 bytes; 160 uploads per level and figure',
      '',
      'one process (PROCESS_ROLE all)',
      header,
      ...levels.map((l) => printedRow(l.clients, l.baseline, l.alone, l.toValid)),
      'peak RSS of this process (baseline server, clients and the service): 300 MB',
      '',
      'two processes (PROCESS_ROLE api + worker)',
      header,
      ...levels.slice(0, 2).map((l) => printedRow(l.clients, l.baseline, l.alone, l.toValid)),
    ].join('\n');
    const runs = parseUploadOutput(text);
    expect(runs.map((r) => r.layout)).toEqual(['all', 'api-worker']);
    expect(runs[0].levels).toEqual(levels);
    expect(runs[1].levels).toEqual(levels.slice(0, 2));
  });

  it('draws a higher figure higher, every series in the legend, and says the figures in words', () => {
    const svg = lineChart({
      title: 'T',
      description: 'D',
      xLabel: 'x',
      yLabel: 'y',
      xTicks: [1, 8, 64],
      series: [
        {
          name: 'low',
          points: [
            [1, 10],
            [8, 20],
            [64, 30],
          ],
        },
        {
          name: 'high',
          points: [
            [1, 100],
            [8, 200],
            [64, 300],
          ],
          reference: true,
        },
      ],
    });
    const ys = (name: string) =>
      new RegExp(`data-name="${name}" points="([^"]+)"`)
        .exec(svg)![1]
        .split(' ')
        .map((p) => Number(p.split(',')[1]));
    // SVG's y grows downwards: bigger values sit higher, so their y is smaller.
    expect(ys('low')[0]).toBeGreaterThan(ys('low')[2]);
    ys('high').forEach((y, i) => expect(y).toBeLessThan(ys('low')[i]));
    expect(svg).toContain('<desc id="desc">D</desc>');
    expect(svg).toMatch(/<text[^>]*>low<\/text>/);
    expect(svg).toMatch(/<text[^>]*>high<\/text>/);
  });

  it('the committed plots are drawn from the recorded bench:upload output, and docs/benchmarks.md shows them', () => {
    const plots = uploadPlots(parseUploadOutput(read('bench/results/upload.txt')));
    expect(plots.map((p) => p.file)).toEqual(['upload-all.svg', 'upload-api-worker.svg']);
    const docs = read('docs/benchmarks.md');
    for (const { file, svg } of plots) {
      expect(read(`docs/plots/${file}`), `docs/plots/${file} is stale: node dist/bench/plot.js upload ...`).toBe(svg);
      expect(docs).toContain(`(plots/${file})`);
    }
    // bench:upload draws the same plots from what it printed, at the end of each run.
    expect(read('bench/upload.ts')).toMatch(/writePlots\(uploadPlots\(parseUploadOutput\(printed/);
  });
});
