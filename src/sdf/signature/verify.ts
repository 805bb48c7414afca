import type { KeyObject } from 'node:crypto';
import type { Limits } from '../limits.js';
import { openArchive } from '../zip/archive.js';
import { parseMeta } from '../rules/meta.js';
import { SIGNATURE_ENTRY } from '../zip/names.js';
import { parseJws, verifyJws, type FlattenedJws } from './jws.js';
import { toPublicKeyObject, type PublicKeyInfo, type SignatureAlgorithm, type JwsAlgorithm } from './keys.js';
import { manifestEntries } from './manifest.js';

/** F9 verification result; `trusted` only when the key is one of the caller's (the tenant's). */
export interface VerifyResult {
  valid: boolean;
  algorithm: SignatureAlgorithm | null;
  key_id: string | null;
  signed_at: string | null;
  trusted: boolean;
  reason?: string;
}

export type KeyLookup = (kid: string) => Promise<PublicKeyInfo | undefined> | PublicKeyInfo | undefined;

/** What trust needs once integrity is settled: small, plain data, so it can cross a worker boundary. */
export interface TrustInput {
  jws: FlattenedJws;
  alg: JwsAlgorithm;
  kid: string;
}

export interface IntegrityOutcome {
  result: VerifyResult;
  trust?: TrustInput;
}

const failed = (reason: string, partial: Partial<VerifyResult> = {}): VerifyResult => ({
  valid: false,
  algorithm: null,
  key_id: null,
  signed_at: null,
  trusted: false,
  ...partial,
  reason,
});

/**
 * F9, integrity half: the entry set equals the manifest's, every digest matches, the manifest names
 * this document, and the JWS verifies with its embedded key. Trust (the tenant's keys) comes after.
 */
export async function checkIntegrity(
  files: Map<string, Buffer>,
  entryNames: string[],
  meta: { document_id: string; sdf_version: string },
): Promise<IntegrityOutcome> {
  const sig = files.get(SIGNATURE_ENTRY);
  if (!sig) return { result: failed('the archive is not signed') };
  const parsed = parseJws(sig);
  if (typeof parsed === 'string') return { result: failed(parsed) };
  const { manifest, header } = parsed;
  const known = { algorithm: parsed.algorithm, key_id: header.kid, signed_at: manifest.signed_at ?? null };
  if (!(await verifyJws(parsed.jws, header.alg, parsed.embeddedKey))) {
    return { result: failed('the signature does not verify with the key it names', known) };
  }
  if (manifest.document_id !== meta.document_id || manifest.sdf_version !== meta.sdf_version) {
    return { result: failed('the manifest describes a different document', known) };
  }
  const actual = manifestEntries(entryNames, (name) => files.get(name) ?? Buffer.alloc(0));
  const signed = new Map(manifest.entries.map((e) => [e.path, e]));
  if (signed.size !== manifest.entries.length) return { result: failed('the manifest lists an entry twice', known) };
  for (const entry of actual) {
    const expected = signed.get(entry.path);
    if (!expected) return { result: failed(`entry ${entry.path} was added after signing`, known) };
    if (expected.size !== entry.size || expected.sha256 !== entry.sha256) {
      return { result: failed(`entry ${entry.path} was changed after signing`, known) };
    }
    signed.delete(entry.path);
  }
  const removed = signed.keys().next();
  if (!removed.done) return { result: failed(`entry ${removed.value} was removed after signing`, known) };
  return {
    result: { valid: true, ...known, trusted: false },
    trust: { jws: parsed.jws, alg: header.alg, kid: header.kid },
  };
}

/**
 * F9, trust half. The kid is looked up among the tenant's keys (rotated ones included, the caller's
 * lookup decides). No key under that kid: valid but untrusted. A tenant key under that kid that does
 * not verify the signature is a forged claim to be that tenant's key, so the signature is invalid.
 */
export async function applyTrust(outcome: IntegrityOutcome, keyLookup?: KeyLookup): Promise<VerifyResult> {
  const { result, trust } = outcome;
  if (!result.valid || !trust || !keyLookup) return result;
  const info = await keyLookup(trust.kid);
  if (!info) return result;
  let key: KeyObject;
  try {
    key = toPublicKeyObject(info.publicKey);
  } catch {
    return { ...result, valid: false, reason: `the trusted key registered as ${trust.kid} is not usable` };
  }
  if (!(await verifyJws(trust.jws, trust.alg, key))) {
    return { ...result, valid: false, reason: `the signature does not verify with the trusted key ${trust.kid}` };
  }
  return { ...result, trusted: true };
}

/** Verifies signature.sig of an archive; archive-level faults (not a ZIP, limits) throw SdfError. */
export async function verifyArchive(
  archive: Buffer | string,
  options: { keyLookup?: KeyLookup; limits?: Partial<Limits> } = {},
): Promise<VerifyResult> {
  const opened = await openArchive(archive, options.limits);
  const meta = parseMeta(opened.files.get('meta.json'));
  const outcome = await checkIntegrity(
    opened.files,
    opened.entries.map((e) => e.name),
    meta,
  );
  return applyTrust(outcome, options.keyLookup);
}
