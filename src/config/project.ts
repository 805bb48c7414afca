import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root: the nearest folder above this module with a package.json (works from src/ and dist/src/). */
export const projectRoot: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
})();

let cachedVersion: string | undefined;

/** The service's and the command line's version, from package.json. */
export function readPackageVersion(): string {
  cachedVersion ??= (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string })
    .version;
  return cachedVersion;
}
