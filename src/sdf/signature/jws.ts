import {
  createPrivateKey,
  sign as cryptoSign,
  verify as cryptoVerify,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
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

const b64 = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

function signOptions(alg: JwsAlgorithm, key: KeyObject): KeyObject | { key: KeyObject; dsaEncoding: 'ieee-p1363' } {
  // F9: ES256 signatures are raw r||s (IEEE P1363), as JWS requires, not DER.
  return alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key;
}

export function signManifest(manifest: SignatureManifest, privateKeyPem: string, publicJwk: JsonWebKey): FlattenedJws {
  const privateKey = createPrivateKey(privateKeyPem);
  const algorithm = algorithmOfKey(privateKey);
  if (algorithm !== manifest.algorithm)
    throw new TypeError(`the private key is ${algorithm}, not ${manifest.algorithm}`);
  const alg = JWS_ALG[algorithm];
  const header: JwsHeader = { alg, typ: SIGNATURE_TYPE, kid: manifest.key_id, jwk: publicJwk };
  const protectedPart = b64(canonicalJson(header));
  const payload = b64(canonicalJson(manifest));
  const signature = cryptoSign('sha256', Buffer.from(`${protectedPart}.${payload}`), signOptions(alg, privateKey));
  return { protected: protectedPart, payload, signature: b64(signature) };
}

export function verifyJws(jws: FlattenedJws, alg: JwsAlgorithm, key: KeyObject): boolean {
  try {
    if (SIGNATURE_ALGORITHM[alg] !== algorithmOfKey(key)) return false;
    const input = Buffer.from(`${jws.protected}.${jws.payload}`);
    return cryptoVerify('sha256', input, signOptions(alg, key), Buffer.from(jws.signature, 'base64url'));
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
  let embeddedKey: KeyObject;
  try {
    embeddedKey = jwkToPublicKey(header.jwk);
  } catch {
    return 'signature.sig: the embedded jwk is not a usable public key';
  }
  return { jws, header, manifest, embeddedKey, algorithm: manifest.algorithm };
}
