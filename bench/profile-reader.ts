/**
 * Where the browser reader's time goes: Chromium's own CPU profiler (the DevTools protocol) on the
 * validation worker and on the page's main thread while the reader judges one file several times.
 *
 *   npm run build && npx vite build --config web/vite.config.ts --minify false --outDir ../dist/web-plain
 *   WEB_DIST=dist/web-plain node dist/bench/profile-reader.js [scan|typical] [rounds]
 *
 * An unminified build keeps the functions' names. The worker is attached to through the browser's
 * target list once the first file has started it (one worker serves every file, as in the reader);
 * that first round, which loads and compiles the worker, is not profiled. Prints the profiles' self and
 * inclusive time per function and writes both profiles as .cpuprofile files beside the working directory
 * (PROFILE_OUT, default reader-worker.cpuprofile and reader-page.cpuprofile), which DevTools opens.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CDPSession } from 'playwright-core';
import { scannedInvoice, typicalInvoice } from '../src/sdf/testing/corpus.js';
import { openReader } from './reader-page.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A session with a worker, through the browser session's (non-flat) target messages. */
class WorkerSession {
  private next = 1;
  private readonly pending = new Map<number, (value: unknown) => void>();
  constructor(
    private readonly browser: CDPSession,
    private readonly sessionId: string,
  ) {
    browser.on('Target.receivedMessageFromTarget', (event: { sessionId: string; message: string }) => {
      if (event.sessionId !== this.sessionId) return;
      const message = JSON.parse(event.message) as { id?: number; result?: unknown; error?: unknown };
      if (message.id === undefined) return;
      const resolve = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) throw new Error(JSON.stringify(message.error));
      resolve?.(message.result);
    });
  }
  send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.next++;
    const answer = new Promise<T>((resolve) => this.pending.set(id, resolve as (value: unknown) => void));
    void this.browser.send('Target.sendMessageToTarget', {
      sessionId: this.sessionId,
      message: JSON.stringify({ id, method, params }),
    });
    return answer;
  }
}

function summarize(title: string, profile: Profile, top = 30): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
  const label = (n: ProfileNode): string => {
    const file = n.callFrame.url.replace(/^.*\/assets\//, '');
    return `${n.callFrame.functionName || '(anonymous)'} ${file}${file ? `:${n.callFrame.lineNumber + 1}` : ''}`;
  };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id)!;
    total += us;
    self.set(label(node), (self.get(label(node)) ?? 0) + us);
    const seen = new Set<string>();
    for (let n: ProfileNode | undefined = node; n; n = byId.get(parentOf.get(n.id) ?? -1)) {
      const f = label(n);
      if (!seen.has(f)) inclusive.set(f, (inclusive.get(f) ?? 0) + us);
      seen.add(f);
    }
  });
  const idle = self.get('(idle) ') ?? 0;
  const busy = total - idle;
  const row = ([f, us]: [string, number]): string =>
    `  ${((us / busy) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(1).padStart(8)} ms  ${f}`;
  console.log(`\n== ${title}: sampled ${(total / 1000).toFixed(0)} ms, busy ${(busy / 1000).toFixed(0)} ms`);
  console.log('self time:');
  for (const r of [...self]
    .filter(([f]) => f !== '(idle) ')
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)) {
    console.log(row(r));
  }
  console.log('inclusive time:');
  for (const r of [...inclusive]
    .filter(([f]) => !/^\((idle|root|program)\)/.test(f))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)) {
    console.log(row(r));
  }
}

async function main(): Promise<void> {
  const which = process.argv[2] ?? 'scan';
  const rounds = Number(process.argv[3] ?? 5);
  const bytes = which === 'typical' ? await typicalInvoice() : await scannedInvoice();
  const { browser, page, dir, close } = await openReader({ prefix: 'sdf-profile-reader-' });
  try {
    const readOnce = async (name: string): Promise<{ elapsed: number; worker: number }> => {
      const path = join(dir, name);
      writeFileSync(path, bytes);
      await page.setInputFiles('#sdf-file', path);
      const result = page.locator(`[data-testid="reader-result"][data-file="${name}"]`);
      await result.waitFor({ timeout: 120_000 });
      const times = {
        elapsed: Number(await result.getAttribute('data-elapsed-ms')),
        worker: Number(await result.getAttribute('data-worker-ms')),
      };
      await result.locator('.pdf-pages[aria-busy="false"] canvas').first().waitFor({ timeout: 120_000 });
      return times;
    };
    await readOnce('warm-up.sdf');

    const cdp = await browser.newBrowserCDPSession();
    const { targetInfos } = (await cdp.send('Target.getTargets')) as {
      targetInfos: { targetId: string; type: string; url: string }[];
    };
    const target = targetInfos.find((t) => t.type === 'worker' && /reader-worker/.test(t.url));
    if (!target) throw new Error(`no reader worker among ${targetInfos.map((t) => t.url).join(', ')}`);
    const { sessionId } = (await cdp.send('Target.attachToTarget', { targetId: target.targetId, flatten: false })) as {
      sessionId: string;
    };
    const worker = new WorkerSession(cdp, sessionId);
    const pageCdp = await page.context().newCDPSession(page);
    await worker.send('Profiler.enable');
    await worker.send('Profiler.setSamplingInterval', { interval: 100 });
    await pageCdp.send('Profiler.enable');
    await pageCdp.send('Profiler.setSamplingInterval', { interval: 100 });
    await worker.send('Profiler.start');
    await pageCdp.send('Profiler.start');
    const times: { elapsed: number; worker: number }[] = [];
    for (let i = 0; i < rounds; i++) times.push(await readOnce(`${which}-${i}.sdf`));
    const { profile: workerProfile } = await worker.send<{ profile: Profile }>('Profiler.stop');
    const { profile: pageProfile } = (await pageCdp.send('Profiler.stop')) as { profile: Profile };
    console.log(`${which}: ${(bytes.length / 1024).toFixed(0)} KB, ${rounds} rounds profiled`);
    for (const t of times) console.log(`  elapsed ${t.elapsed.toFixed(1)} ms, in the worker ${t.worker.toFixed(1)} ms`);
    const out = process.env.PROFILE_OUT ?? 'reader';
    writeFileSync(`${out}-worker.cpuprofile`, JSON.stringify(workerProfile));
    writeFileSync(`${out}-page.cpuprofile`, JSON.stringify(pageProfile));
    summarize('worker', workerProfile);
    summarize('page (main thread; includes drawing the PDF and the page)', pageProfile, 20);
  } finally {
    await close();
  }
}

await main();
