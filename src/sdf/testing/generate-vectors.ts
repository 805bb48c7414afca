import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { buildVectors, newVectorKeys, type VectorPrivateKeys } from './vectors.js';

/**
 * Writes the F9 test vectors: `node dist/src/sdf/testing/generate-vectors.js [folder]` (default
 * test/vectors). The committed private keys are reused, so RS256 output is unchanged; `--new-keys`
 * makes new ones. ES256 signatures are randomised, so each run writes new, equally valid ES256 bytes.
 */
const args = process.argv.slice(2);
const folder = resolve(args.find((a) => !a.startsWith('--')) ?? 'test/vectors');
const keyFile = (name: string): string => join(folder, 'keys', `${name}-private.pem`);
const keys: VectorPrivateKeys =
  !args.includes('--new-keys') && existsSync(keyFile('es256')) && existsSync(keyFile('rs256'))
    ? { es256: readFileSync(keyFile('es256'), 'utf8'), rs256: readFileSync(keyFile('rs256'), 'utf8') }
    : newVectorKeys();
for (const [path, bytes] of await buildVectors(keys)) {
  mkdirSync(dirname(join(folder, path)), { recursive: true });
  writeFileSync(join(folder, path), bytes);
}
process.stdout.write(`test vectors written to ${folder}\n`);
