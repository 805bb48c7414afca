import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../schema/canonical.js';
import { openArchive } from '../zip/archive.js';
import { parseMeta } from '../rules/meta.js';
import { validate } from '../validate.js';
import {
  VECTOR_KEYS,
  VECTOR_SIGNED_AT,
  buildVectors,
  isCanonical,
  signedPayload,
  vectorArchive,
  type VectorCase,
  type VectorKeyName,
} from '../testing/vectors.js';
import type { PublicJwk } from './keys.js';
import { manifestEntries } from './manifest.js';
import { signArchive } from './sign.js';
import { verifyArchive, type KeyLookup } from './verify.js';

/** The committed vectors (test/vectors), re-verified with the code as it is now. */
const folder = new URL('../../../test/vectors/', import.meta.url);
const read = (path: string): Buffer => readFileSync(new URL(path, folder));
const expected = JSON.parse(read('expected.json').toString()) as { signed_at: string; cases: VectorCase[] };
const privateKey = (name: VectorKeyName): string => read(`keys/${name}-private.pem`).toString();

function lookupFrom(file: string | undefined): KeyLookup | undefined {
  if (!file) return undefined;
  const { keys } = JSON.parse(read(file).toString()) as { keys: PublicJwk[] };
  return (kid) => {
    const jwk = keys.find((k) => k.kid === kid);
    return jwk ? { publicKey: jwk } : undefined;
  };
}

describe('published test vectors (F9)', () => {
  it('lists every outcome a verifier must reproduce', () => {
    expect(expected.signed_at).toBe(VECTOR_SIGNED_AT);
    expect(expected.cases.filter((c) => c.expect).length).toBe(4);
    expect(expected.cases.filter((c) => c.expect_error).length).toBe(3);
  });

  it.each(expected.cases.map((c) => [c.file, c.trusted_keys ?? 'embedded key only', c] as const))(
    '%s with %s verifies as published',
    async (file, _keys, vector) => {
      const archive = read(file);
      const keyLookup = lookupFrom(vector.trusted_keys);
      const verified = await verifyArchive(archive, { keyLookup });
      const result = await validate(archive, { keyLookup });
      if (vector.expect) {
        expect(verified).toEqual(vector.expect);
        expect(result).toMatchObject({ valid: true, is_signed: true, checks: { signature: 'pass' } });
      } else {
        expect(verified).toMatchObject({ valid: false, reason: vector.expect_error!.reason });
        expect(result.error?.code).toBe(vector.expect_error!.code);
        expect(result.checks.signature).toBe('fail');
      }
    },
  );

  it('the committed unsigned archive is the fixed archive, and it validates unsigned', async () => {
    expect(read('unsigned.sdf').equals(vectorArchive())).toBe(true);
    expect(await validate(read('unsigned.sdf'))).toMatchObject({ valid: true, is_signed: false });
  });

  it.each(Object.keys(VECTOR_KEYS) as VectorKeyName[])(
    'the committed %s manifest bytes are what the code computes from the archive',
    async (name) => {
      const committed = read(`${name}-manifest.jcs.json`);
      expect(isCanonical(committed)).toBe(true);
      expect((await signedPayload(read(`${name}-signed.sdf`))).equals(committed)).toBe(true);
      // Computed independently of signature.sig: entries, digests and meta of the unsigned archive.
      const { files, entries } = await openArchive(read('unsigned.sdf'));
      const meta = parseMeta(files.get('meta.json'));
      const manifest = {
        sdf_sig_version: '1',
        document_id: meta.document_id,
        sdf_version: meta.sdf_version,
        algorithm: VECTOR_KEYS[name].algorithm,
        key_id: VECTOR_KEYS[name].kid,
        signed_at: VECTOR_SIGNED_AT,
        entries: manifestEntries(
          entries.map((e) => e.name),
          (path) => files.get(path)!,
        ),
      };
      expect(canonicalJson(manifest)).toBe(committed.toString('utf8'));
    },
  );

  it('signing the fixed archive with the fixed RSA key gives the committed bytes exactly', async () => {
    const signed = await signArchive(read('unsigned.sdf'), {
      privateKeyPem: privateKey('rs256'),
      keyId: VECTOR_KEYS.rs256.kid,
      signedAt: VECTOR_SIGNED_AT,
    });
    expect(signed.equals(read('rs256-signed.sdf'))).toBe(true);
    const { files } = await openArchive(signed);
    expect(files.get('signature.sig')!.equals(read('rs256-signature.sig'))).toBe(true);
  });

  it('regenerating from the committed keys reproduces every deterministic file', async () => {
    const rebuilt = await buildVectors({ es256: privateKey('es256'), rs256: privateKey('rs256') });
    for (const [path, bytes] of rebuilt) {
      // ES256 signatures are randomised (so are the files that carry them); they are verified above instead.
      if (/^es256-(signed|tampered)\.sdf$/.test(path)) continue;
      expect({ path, same: bytes.equals(read(path)) }).toEqual({ path, same: true });
    }
  });
});
