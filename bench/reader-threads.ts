/**
 * What else runs in the browser while the reader checks a file: drives the reader page as
 * `bench:reader` does, records a Chromium trace over the rounds, and prints the time every other thread
 * (the page's main thread, raster, compositor, other workers, the display compositor) spent inside the
 * checks' own spans (the worker's `sdf-check` measure). On a 2-core machine that time is taken from the
 * check. Prints per thread and per trace event, summed over the rounds.
 *
 *   npm run build && node dist/bench/reader-threads.js [typical|scan] [rounds]     (WEB_DIST: another build)
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scannedInvoice, typicalInvoice } from '../src/sdf/testing/corpus.js';
import { openReader } from './reader-page.js';

interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  args?: { name?: string; data?: { url?: string }; src_func?: string };
}

/** Top-level task events: their sum is a thread's busy time (nested events are broken down below). */
const TASKS = new Set(['ThreadControllerImpl::RunTask', 'ThreadPool_RunTask']);

async function main(): Promise<void> {
  const which = process.argv[2] === 'scan' ? 'scan' : 'typical';
  const rounds = Number(process.argv[3] ?? 8);
  const { browser, page, dir, close } = await openReader({ prefix: 'sdf-bench-threads-' });
  try {
    const bytes = which === 'scan' ? await scannedInvoice() : await typicalInvoice();
    const workerMs: number[] = [];
    // The first round loads and compiles the worker, as in bench:reader: the trace starts after it.
    for (let i = 0; i <= rounds; i++) {
      if (i === 1) {
        await browser.startTracing(page, {
          categories: ['toplevel', 'devtools.timeline', 'blink.user_timing', 'v8', 'blink_gc', 'cc', 'viz'],
        });
      }
      const name = `${which}-${i}.sdf`;
      writeFileSync(join(dir, name), bytes);
      await page.setInputFiles('#sdf-file', join(dir, name));
      const result = page.locator(`[data-testid="reader-result"][data-file="${name}"]`);
      await result.waitFor({ timeout: 120_000 });
      if (i > 0) workerMs.push(Number(await result.getAttribute('data-worker-ms')));
      await result.locator('.pdf-pages[aria-busy="false"] canvas').first().waitFor({ timeout: 120_000 });
    }
    const trace = JSON.parse((await browser.stopTracing()).toString('utf8')) as
      { traceEvents: TraceEvent[] } | TraceEvent[];
    const events = Array.isArray(trace) ? trace : trace.traceEvents;
    const threads = new Map<string, string>();
    const processes = new Map<number, string>();
    for (const e of events) {
      if (e.ph === 'M' && e.name === 'thread_name') threads.set(`${e.pid}/${e.tid}`, e.args?.name ?? '?');
      if (e.ph === 'M' && e.name === 'process_name') processes.set(e.pid, e.args?.name ?? '?');
    }
    const marks = events.filter((e) => e.name === 'sdf-check' && (e.ph === 'b' || e.ph === 'e'));
    marks.sort((a, b) => a.ts - b.ts);
    const checker = marks[0] ? `${marks[0].pid}/${marks[0].tid}` : '';
    const spans: [number, number][] = [];
    for (let k = 0; k + 1 < marks.length; k += 2) spans.push([marks[k]!.ts, marks[k + 1]!.ts]);
    if (spans.length === 0) throw new Error('no sdf-check spans in the trace: is the build the current one?');
    const inSpans = (e: TraceEvent): number =>
      spans.reduce((sum, [a, b]) => sum + Math.max(0, Math.min(e.ts + (e.dur ?? 0), b) - Math.max(e.ts, a)), 0);
    const perThread = new Map<string, number>();
    const perEvent = new Map<string, number>();
    for (const e of events) {
      const key = `${e.pid}/${e.tid}`;
      if (e.ph !== 'X' || e.dur === undefined || key === checker) continue;
      const overlap = inSpans(e);
      if (overlap <= 0) continue;
      const thread = `${processes.get(e.pid) ?? e.pid} ${threads.get(key) ?? e.tid}`;
      if (TASKS.has(e.name)) perThread.set(thread, (perThread.get(thread) ?? 0) + overlap);
      else perEvent.set(`${thread}: ${e.name}`, (perEvent.get(`${thread}: ${e.name}`) ?? 0) + overlap);
    }
    const spanMs = spans.reduce((sum, [a, b]) => sum + (b - a), 0) / 1000;
    const rows = [
      `${which} invoice, ${spans.length} checks traced: ${spanMs.toFixed(1)} ms of checking in all ` +
        `(the worker's own figures: ${workerMs.map((ms) => ms.toFixed(1)).join(', ')} ms)`,
      'other threads busy inside the checks (ms, summed over the checks):',
      ...[...perThread]
        .sort((a, b) => b[1] - a[1])
        .filter(([, us]) => us >= 500)
        .map(([thread, us]) => `  ${(us / 1000).toFixed(1).padStart(7)}  ${thread}`),
      'by trace event (nested events are counted within their parents too):',
      ...[...perEvent]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 25)
        .filter(([, us]) => us >= 500)
        .map(([event, us]) => `  ${(us / 1000).toFixed(1).padStart(7)}  ${event}`),
    ];
    process.stdout.write(`${rows.join('\n')}\n`);
  } finally {
    await close();
  }
}

await main();
