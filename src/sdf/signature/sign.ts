import { createPrivateKey, createPublicKey } from 'node:crypto';
import { SdfError } from '../errors.js';
import type { Limits } from '../limits.js';
import { parseMeta } from '../rules/meta.js';
import { openArchive } from '../zip/archive.js';
import { SIGNATURE_ENTRY } from '../zip/names.js';
import { signManifest } from './jws.js';
import { algorithmOfKey, jwkThumbprint, publicKeyToJwk, type SignatureAlgorithm } from './keys.js';
import { manifestEntries, type SignatureManifest } from './manifest.js';
import { replaceEntryVerbatim } from './raw-zip.js';

export interface SignOptions {
  privateKeyPem: string;
  /** Defaults to the algorithm of the key; a mismatch is refused. */
  algorithm?: SignatureAlgorithm;
  /** Defaults to the RFC 7638 thumbprint of the public key. */
  keyId?: string;
  /** ISO 8601 UTC; defaults to now. Fixed in the published test vectors. */
  signedAt?: string;
  limits?: Partial<Limits>;
}

/**
 * F9: adds signature.sig (or replaces an existing one) and changes no other entry. The archive must
 * open within the F2 limits and carry a valid meta.json, whose document_id the manifest binds.
 */
export async function signArchive(archive: Buffer, options: SignOptions): Promise<Buffer> {
  const privateKey = createPrivateKey(options.privateKeyPem);
  const keyAlgorithm = algorithmOfKey(privateKey);
  if (options.algorithm && options.algorithm !== keyAlgorithm) {
    throw new SdfError('SDF_ERROR_INVALID_SIGNATURE', `the private key is ${keyAlgorithm}, not ${options.algorithm}`);
  }
  const publicKey = createPublicKey(privateKey);
  const keyId = options.keyId ?? jwkThumbprint(publicKey);
  const signedAt = options.signedAt ?? new Date().toISOString();
  const opened = await openArchive(archive, options.limits);
  const meta = parseMeta(opened.files.get('meta.json'));
  const names = opened.entries.map((e) => e.name);
  const manifest: SignatureManifest = {
    sdf_sig_version: '1',
    document_id: meta.document_id,
    sdf_version: meta.sdf_version,
    algorithm: keyAlgorithm,
    key_id: keyId,
    signed_at: signedAt,
    entries: manifestEntries(names, (name) => opened.files.get(name) ?? Buffer.alloc(0)),
  };
  const jws = await signManifest(manifest, options.privateKeyPem, publicKeyToJwk(publicKey, keyId));
  const content = Buffer.from(JSON.stringify(jws), 'utf8');
  const when = new Date(signedAt);
  return replaceEntryVerbatim(
    archive,
    opened.entries,
    SIGNATURE_ENTRY,
    content,
    Number.isNaN(when.getTime()) ? new Date() : when,
  );
}
