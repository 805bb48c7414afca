import { createHash } from 'node:crypto';
import type { SignatureAlgorithm } from './keys.js';

export const SIGNATURE_TYPE = 'sdf-signature+jws';

export interface ManifestEntry {
  path: string;
  size: number;
  sha256: string;
}

/** F9: the signed manifest; serialised with RFC 8785 before it becomes the JWS payload. */
export interface SignatureManifest {
  sdf_sig_version: '1';
  document_id: string;
  sdf_version: string;
  algorithm: SignatureAlgorithm;
  key_id: string;
  signed_at: string;
  entries: ManifestEntry[];
}

/** F9: every entry except signature.sig, sorted by the UTF-8 bytes of its path, digests over the inflated bytes. */
export function manifestEntries(names: string[], contentOf: (name: string) => Buffer): ManifestEntry[] {
  return names
    .filter((name) => name !== 'signature.sig')
    .sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')))
    .map((path) => {
      const bytes = contentOf(path);
      return { path, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
    });
}
