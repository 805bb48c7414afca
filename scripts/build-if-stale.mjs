/* global process, console */
// `npm start` builds only when dist/ is older than its inputs; `npm run build` always builds and ends by
// writing the stamp (`node scripts/build-if-stale.mjs --stamp`). Plain Node, no dependency: it runs
// before anything is compiled.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Written by a successful `npm run build`; its mtime is when that build ended. */
export const STAMP = 'dist/.build-stamp';

/** Never inputs, wherever they appear under an input folder. */
const SKIPPED = new Set(['node_modules', 'dist', '.git']);

/**
 * What a build reads, relative to the project root: the folders and files of the server build, and the
 * web front end (`web/`) when the project has one. Only those that exist.
 */
export function buildInputs(root) {
  const inputs = ['src', 'migrations', 'bench', 'web', 'package.json'];
  for (const name of readdirSync(root)) if (/^tsconfig.*\.json$/.test(name)) inputs.push(name);
  return inputs.filter((input) => existsSync(join(root, input)));
}

/**
 * The newest mtime (ms) under `path`: files and folders alike, since a folder's own mtime moves when an
 * entry is added, removed or renamed (a deleted source must rebuild too).
 */
export function newestMtime(path) {
  const stat = lstatSync(path);
  let newest = stat.mtimeMs;
  if (stat.isDirectory()) {
    for (const entry of readdirSync(path)) {
      if (SKIPPED.has(entry)) continue;
      newest = Math.max(newest, newestMtime(join(path, entry)));
    }
  }
  return newest;
}

/** Why `root` needs a build, or null when dist/ is newer than every input. */
export function staleReason(root, inputs = buildInputs(root)) {
  const stamp = join(root, STAMP);
  if (!existsSync(stamp)) return 'no completed build';
  const built = lstatSync(stamp).mtimeMs;
  for (const input of inputs) {
    // Equal counts as newer: a file written in the same clock tick as the stamp may not be built.
    if (newestMtime(join(root, input)) >= built) return `${input} changed since the last build`;
  }
  return null;
}

export function writeStamp(root) {
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(join(root, STAMP), `${new Date().toISOString()}\n`);
}

function main() {
  const root = process.cwd();
  if (process.argv.includes('--stamp')) {
    writeStamp(root);
    return;
  }
  const reason = staleReason(root);
  if (reason === null) {
    console.error('dist/ is up to date; not rebuilt (npm run build forces a build)');
    return;
  }
  console.error(`building: ${reason}`);
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  process.exit(build.status ?? 1);
}

if (resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) main();
