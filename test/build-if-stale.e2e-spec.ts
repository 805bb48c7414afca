import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildInputs, STAMP, staleReason, writeStamp } from '../scripts/build-if-stale.mjs';

const SCRIPT = resolve('scripts/build-if-stale.mjs');

/** Sets a path's mtime `secondsAgo` in the past (a stamp written "now" is then newer than it). */
function age(path: string, secondsAgo: number): void {
  const when = new Date(Date.now() - secondsAgo * 1000);
  utimesSync(path, when, when);
}

describe('npm start builds only a stale dist/ (scripts/build-if-stale.mjs)', () => {
  let root: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'sdf-stale-'));
    for (const dir of ['src/cli', 'migrations', 'bench']) mkdirSync(join(root, dir), { recursive: true });
    writeFileSync(join(root, 'src/cli/sdf.ts'), 'export {};\n');
    writeFileSync(join(root, 'migrations/index.ts'), 'export {};\n');
    writeFileSync(join(root, 'tsconfig.json'), '{}\n');
    writeFileSync(join(root, 'tsconfig.build.json'), '{}\n');
    // `npm run build` of this stand-in project counts its builds, then stamps like the real one.
    writeFileSync(
      join(root, 'package.json'),
      JSON.stringify({
        name: 'stale-check',
        private: true,
        scripts: {
          build: `node -e "require('fs').appendFileSync('builds.log','x')" && node ${JSON.stringify(SCRIPT)} --stamp`,
        },
      }),
    );
    for (const path of ['src', 'src/cli', 'src/cli/sdf.ts', 'migrations', 'migrations/index.ts', 'bench']) {
      age(join(root, path), 60);
    }
    for (const path of ['tsconfig.json', 'tsconfig.build.json', 'package.json']) age(join(root, path), 60);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const builds = () => {
    try {
      return readFileSync(join(root, 'builds.log'), 'utf8').length;
    } catch {
      return 0;
    }
  };
  /** A build that ended 10 s ago: every input touched since is newer, whatever the clock's granularity. */
  const stamp = () => {
    writeStamp(root);
    age(join(root, STAMP), 10);
  };
  const start = () => execFileSync('node', [SCRIPT], { cwd: root, stdio: 'pipe' });

  it('takes src, migrations, bench, tsconfig*.json and package.json as inputs, and web/ once it exists', () => {
    expect(buildInputs(root).sort()).toEqual(
      ['bench', 'migrations', 'package.json', 'src', 'tsconfig.build.json', 'tsconfig.json'].sort(),
    );
    mkdirSync(join(root, 'web'));
    expect(buildInputs(root)).toContain('web');
  });

  it('no stamp: stale; a fresh stamp: current; a touched, added or deleted source: stale again', () => {
    expect(staleReason(root)).toBe('no completed build');
    stamp();
    expect(staleReason(root)).toBeNull();

    writeFileSync(join(root, 'src/cli/sdf.ts'), 'export const changed = 1;\n');
    expect(staleReason(root)).toBe('src changed since the last build');
    stamp();
    age(join(root, 'src/cli/sdf.ts'), 30);
    age(join(root, 'src/cli'), 30);
    expect(staleReason(root)).toBeNull();

    rmSync(join(root, 'migrations/index.ts'));
    expect(staleReason(root)).toBe('migrations changed since the last build');
    stamp();
    age(join(root, 'migrations'), 30);
    expect(staleReason(root)).toBeNull();

    writeFileSync(join(root, 'tsconfig.build.json'), '{"x":1}\n');
    expect(staleReason(root)).toBe('tsconfig.build.json changed since the last build');
    age(join(root, 'tsconfig.build.json'), 30);

    // The web front end's sources count once there is one.
    mkdirSync(join(root, 'web/src'), { recursive: true });
    writeFileSync(join(root, 'web/src/main.tsx'), 'export {};\n');
    expect(staleReason(root)).toBe('web changed since the last build');
  });

  it('runs npm run build when stale, not when current (dist/ left as it is), and again after a change', () => {
    start();
    expect(builds()).toBe(1);
    writeFileSync(join(root, 'dist/kept.js'), 'built output\n');
    start();
    start();
    expect(builds()).toBe(1);
    expect(readFileSync(join(root, 'dist/kept.js'), 'utf8')).toBe('built output\n');
    writeFileSync(join(root, 'bench/new.ts'), 'export {};\n');
    start();
    expect(builds()).toBe(2);
    expect(readFileSync(join(root, STAMP), 'utf8')).toMatch(/^\d{4}-\d\d-\d\dT/);
  });
});
