import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { SdfError } from '../errors.js';
import type { Limits } from '../limits.js';
import { parseMeta } from '../rules/meta.js';
import { isRfc3339DateTime } from '../rules/time.js';
import { openArchive } from '../zip/archive.js';
import { SIGNATURE_ENTRY } from '../zip/names.js';
import { signManifest } from './jws.js';
import { algorithmOfKey, jwkThumbprint, publicKeyToJwk, type SignatureAlgorithm } from './keys.js';
import { manifestEntries, type SignatureManifest } from './manifest.js';
import { replaceEntryVerbatim } from './raw-zip.js';

export interface SignOptions {
  /** The private key as PEM (PKCS#8 or SEC1/PKCS#1), parsed for this call. */
  privateKeyPem?: string;
  /** Or the key already parsed, for a caller signing many files with one key; wins over the PEM. */
  privateKey?: KeyObject;
  /** Defaults to the algorithm of the key; a mismatch is refused. */
  algorithm?: SignatureAlgorithm;
  /** Defaults to the RFC 7638 thumbprint of the public key. */
  keyId?: string;
  /** RFC 3339 with an offset (ISO 8601 UTC); defaults to now. Fixed in the published test vectors. */
  signedAt?: string;
  limits?: Partial<Limits>;
}

function privateKeyOf(options: SignOptions): KeyObject {
  if (options.privateKey) {
    if (options.privateKey.type !== 'private') throw new TypeError('privateKey is not a private key');
    return options.privateKey;
  }
  if (options.privateKeyPem === undefined) throw new TypeError('signArchive needs privateKeyPem or privateKey');
  return createPrivateKey(options.privateKeyPem);
}

/**
 * F9: adds signature.sig (or replaces an existing one) and changes no other entry. The archive must
 * open within the F2 limits and carry a valid meta.json, whose document_id the manifest binds.
 */
export async function signArchive(archive: Buffer, options: SignOptions): Promise<Buffer> {
  const privateKey = privateKeyOf(options);
  const keyAlgorithm = algorithmOfKey(privateKey);
  if (options.algorithm && options.algorithm !== keyAlgorithm) {
    throw new SdfError('SDF_ERROR_INVALID_SIGNATURE', `the private key is ${keyAlgorithm}, not ${options.algorithm}`);
  }
  const publicKey = createPublicKey(privateKey);
  const keyId = options.keyId ?? jwkThumbprint(publicKey);
  const signedAt = options.signedAt ?? new Date().toISOString();
  // F9: verification refuses any other signed_at; a file that cannot verify is not written.
  if (!isRfc3339DateTime(signedAt))
    throw new TypeError('signedAt must be an RFC 3339 date-time with a timezone offset');
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
  const jws = await signManifest(manifest, privateKey, publicKeyToJwk(publicKey, keyId));
  const content = Buffer.from(JSON.stringify(jws), 'utf8');
  const when = new Date(signedAt); // a leap second (:60) is RFC 3339 but no Date
  return replaceEntryVerbatim(
    archive,
    opened.entries,
    SIGNATURE_ENTRY,
    content,
    Number.isNaN(when.getTime()) ? new Date() : when,
  );
}
