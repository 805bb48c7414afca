import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { projectRoot } from './helpers/processes.js';

interface Manifest {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}
interface LockEntry extends Manifest {
  version?: string;
  optional?: boolean;
}
interface Lockfile {
  lockfileVersion: number;
  packages: Record<string, LockEntry>;
}

const read = <T>(path: string): T => JSON.parse(readFileSync(join(projectRoot, path), 'utf8')) as T;

/** Where npm resolves `name` from the package installed at `from` (nested first, then each parent up to the root). */
function resolveIn(packages: Lockfile['packages'], from: string, name: string): LockEntry | undefined {
  let base = from;
  for (;;) {
    const hit = packages[`${base ? `${base}/` : ''}node_modules/${name}`];
    if (hit) return hit;
    if (!base) return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut < 0 ? '' : base.slice(0, cut);
  }
}

describe('package-lock.json', () => {
  const manifest = read<Manifest>('package.json');
  const lock = read<Lockfile>('package-lock.json');
  const root = lock.packages[''];

  it('records exactly the ranges package.json declares (npm ci refuses a lockfile that disagrees)', () => {
    for (const field of ['dependencies', 'devDependencies', 'optionalDependencies'] as const) {
      expect(root[field] ?? {}, field).toEqual(manifest[field] ?? {});
    }
  });

  it('holds a version satisfying every declared range, and an entry for every dependency of every package, other platforms included', () => {
    expect(lock.lockfileVersion).toBeGreaterThanOrEqual(3);
    const declared = { ...manifest.dependencies, ...manifest.devDependencies };
    for (const [name, range] of Object.entries(declared)) {
      const entry = lock.packages[`node_modules/${name}`];
      expect(entry, name).toBeDefined();
      expect(semver.satisfies(entry.version ?? '', range), `${name}@${entry.version} against ${range}`).toBe(true);
    }
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (path === '' || !path.includes('node_modules/')) continue;
      const needs = { ...entry.dependencies, ...entry.optionalDependencies };
      for (const name of Object.keys(needs)) {
        if (!resolveIn(lock.packages, path, name)) missing.push(`${path} -> ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
