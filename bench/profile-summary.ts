/**
 * Groups a V8 CPU profile's samples by where the code lives: a package under node_modules, the
 * service's own folders, Node's internals, garbage collection and idle time.
 *
 *   node dist/bench/profile-summary.js <file.cpuprofile> [top] [last-ms]
 *
 * With `last-ms`, only the samples of the profile's last that many milliseconds count (the phase a
 * benchmark measures last, without the process's start-up and earlier phases). Besides self time it
 * prints the service's own functions by inclusive time (with everything they called).
 */
import { readFileSync } from 'node:fs';

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

function group(url: string, name: string): string {
  if (name === '(idle)' || name === '(program)' || name === '(garbage collector)') return name;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/dist\/(src\/[^/]+|bench)\//.exec(url);
  if (own) return own[1]!;
  if (url.startsWith('node:') || url === '') return `node internals${name ? '' : ''}`;
  return url;
}

const [file, topArg, lastArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: profile-summary <file.cpuprofile> [top] [last-ms]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map<number, number>();
for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
const groups = new Map<string, number>();
const functions = new Map<string, number>();
const inclusive = new Map<string, number>();
const label = (node: ProfileNode) =>
  `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/.*node_modules\//, '').replace(/.*\/dist\//, '')}:${node.callFrame.lineNumber}`;
const stamps: number[] = [];
let at = 0;
for (const delta of profile.timeDeltas) stamps.push((at += delta));
const from = lastArg ? at - Number(lastArg) * 1000 : -Infinity;
let total = 0;
profile.samples.forEach((id, i) => {
  if (stamps[i]! < from) return;
  const node = byId.get(id)!;
  const us = profile.timeDeltas[i] ?? 0;
  total += us;
  const seen = new Set<string>();
  for (let n: ProfileNode | undefined = node; n; n = byId.get(parentOf.get(n.id) ?? -1)) {
    if (!/\/dist\/src\//.test(n.callFrame.url)) continue;
    const f = label(n);
    if (!seen.has(f)) inclusive.set(f, (inclusive.get(f) ?? 0) + us);
    seen.add(f);
  }
  const g = group(node.callFrame.url, node.callFrame.functionName);
  groups.set(g, (groups.get(g) ?? 0) + us);
  const f = label(node);
  functions.set(f, (functions.get(f) ?? 0) + us);
});
const busy = total - (groups.get('(idle)') ?? 0);
console.log(`sampled ${(total / 1000).toFixed(0)} ms, busy ${(busy / 1000).toFixed(0)} ms`);
console.log('share of busy time by group:');
for (const [g, us] of [...groups]
  .filter(([g]) => g !== '(idle)')
  .sort((a, b) => b[1] - a[1])
  .slice(0, 25)) {
  console.log(`  ${((us / busy) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${g}`);
}
console.log('top functions by self time:');
for (const [f, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(1, Number(topArg ?? 25))) {
  console.log(`  ${((us / busy) * 100).toFixed(1).padStart(5)}%  ${f}`);
}
console.log("the service's own functions by inclusive time:");
for (const [f, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 25))) {
  console.log(`  ${((us / busy) * 100).toFixed(1).padStart(5)}%  ${f}`);
}
