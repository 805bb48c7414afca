import type { JsonWebKey, KeyObject } from 'node:crypto';
import { FlattenedSign, flattenedVerify, type JWSHeaderParameters } from 'jose';
import { isRfc3339DateTime } from '../rules/time.js';
import { canonicalJson } from '../schema/canonical.js';
import {
  JWS_ALG,
  SIGNATURE_ALGORITHM,
  algorithmOfKey,
  jwkToPublicKey,
  type JwsAlgorithm,
  type SignatureAlgorithm,
} from './keys.js';
import { SIGNATURE_TYPE, type SignatureManifest } from './manifest.js';

/** F9: the flattened JWS serialisation (RFC 7515 7.2.2) stored in signature.sig. */
export interface FlattenedJws {
  protected: string;
  payload: string;
  signature: string;
}

export interface JwsHeader {
  alg: JwsAlgorithm;
  typ: typeof SIGNATURE_TYPE;
  kid: string;
  jwk: JsonWebKey;
}

/**
 * F9: signed with `jose` (RFC 7515; ES256 signatures raw r||s as JWS requires). The bytes stay those of
 * the published format: jose serialises the protected header with JSON.stringify in the object's key
 * order, so the header object is rebuilt from its canonical JSON (RFC 8785, keys sorted at every
 * level) and serialises to exactly those bytes; the payload is the canonical manifest's bytes.
 */
export async function signManifest(
  manifest: SignatureManifest,
  privateKey: KeyObject,
  publicJwk: JsonWebKey,
): Promise<FlattenedJws> {
  const algorithm = algorithmOfKey(privateKey);
  if (algorithm !== manifest.algorithm)
    throw new TypeError(`the private key is ${algorithm}, not ${manifest.algorithm}`);
  const alg = JWS_ALG[algorithm];
  const canonicalHeader = canonicalJson({ alg, typ: SIGNATURE_TYPE, kid: manifest.key_id, jwk: publicJwk });
  const header = JSON.parse(canonicalHeader) as JWSHeaderParameters;
  if (JSON.stringify(header) !== canonicalHeader)
    throw new TypeError('the protected header has no stable serialisation');
  const signed = await new FlattenedSign(Buffer.from(canonicalJson(manifest), 'utf8'))
    .setProtectedHeader(header)
    .sign(privateKey);
  return { protected: signed.protected!, payload: signed.payload, signature: signed.signature };
}

/** F9: verified with `jose`, the algorithm pinned to the one the header names and the key's own type. */
export async function verifyJws(jws: FlattenedJws, alg: JwsAlgorithm, key: KeyObject): Promise<boolean> {
  try {
    if (SIGNATURE_ALGORITHM[alg] !== algorithmOfKey(key)) return false;
    await flattenedVerify(jws, key, { algorithms: [alg] });
    return true;
  } catch {
    return false;
  }
}

export interface ParsedJws {
  jws: FlattenedJws;
  header: JwsHeader;
  manifest: SignatureManifest;
  embeddedKey: KeyObject;
  algorithm: SignatureAlgorithm;
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Parses signature.sig; returns a reason string instead of throwing, so verification can report it (F9). */
export function parseJws(bytes: Buffer): ParsedJws | string {
  let jws: FlattenedJws;
  try {
    jws = JSON.parse(bytes.toString('utf8')) as FlattenedJws;
  } catch {
    return 'signature.sig is not JSON';
  }
  if (typeof jws !== 'object' || jws === null) return 'signature.sig is not a JWS object';
  for (const part of ['protected', 'payload', 'signature'] as const) {
    if (typeof jws[part] !== 'string' || !BASE64URL.test(jws[part])) return `signature.sig: ${part} is not base64url`;
  }
  let header: JwsHeader;
  let manifest: SignatureManifest;
  let payloadText: string;
  try {
    header = JSON.parse(Buffer.from(jws.protected, 'base64url').toString('utf8')) as JwsHeader;
    payloadText = Buffer.from(jws.payload, 'base64url').toString('utf8');
    manifest = JSON.parse(payloadText) as SignatureManifest;
  } catch {
    return 'signature.sig: protected header or payload is not JSON';
  }
  if (header?.alg !== 'ES256' && header?.alg !== 'RS256') return 'signature.sig: alg must be ES256 or RS256';
  if (header.typ !== SIGNATURE_TYPE) return `signature.sig: typ must be ${SIGNATURE_TYPE}`;
  if (typeof header.kid !== 'string' || header.kid === '') return 'signature.sig: kid is missing';
  if (typeof manifest !== 'object' || manifest === null || manifest.sdf_sig_version !== '1') {
    return 'signature.sig: unknown manifest version';
  }
  if (canonicalJson(manifest) !== payloadText) return 'signature.sig: the payload is not RFC 8785 canonical JSON';
  if (!Array.isArray(manifest.entries)) return 'signature.sig: the manifest has no entry list';
  if (manifest.algorithm !== SIGNATURE_ALGORITHM[header.alg])
    return 'signature.sig: manifest algorithm and alg disagree';
  if (manifest.key_id !== header.kid) return 'signature.sig: manifest key_id and kid disagree';
  // F9: signed_at is reported as the time of signing; only a date is one.
  if (typeof manifest.signed_at !== 'string' || !isRfc3339DateTime(manifest.signed_at)) {
    return 'signature.sig: signed_at must be an RFC 3339 date-time with a timezone offset';
  }
  let embeddedKey: KeyObject;
  try {
    embeddedKey = jwkToPublicKey(header.jwk);
  } catch {
    return 'signature.sig: the embedded jwk is not a usable public key';
  }
  return { jws, header, manifest, embeddedKey, algorithm: manifest.algorithm };
}
