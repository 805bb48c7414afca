import { KeyObject, createHash, createPublicKey, generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { SdfError } from '../errors.js';

/** The two algorithms of SDF_FORMAT 11.2 by their service names (SDF-SPEC signing key) and JWS names (F9). */
export type SignatureAlgorithm = 'ECDSA-P256' | 'RSA-2048';
export type JwsAlgorithm = 'ES256' | 'RS256';

export const JWS_ALG: Record<SignatureAlgorithm, JwsAlgorithm> = { 'ECDSA-P256': 'ES256', 'RSA-2048': 'RS256' };
export const SIGNATURE_ALGORITHM: Record<JwsAlgorithm, SignatureAlgorithm> = { ES256: 'ECDSA-P256', RS256: 'RSA-2048' };

export interface PublicJwk extends JsonWebKey {
  kid: string;
  alg: JwsAlgorithm;
  use: 'sig';
}

export interface GeneratedKeyPair {
  algorithm: SignatureAlgorithm;
  privateKeyPem: string;
  publicKeyPem: string;
  publicJwk: PublicJwk;
  keyId: string;
}

/** A public key as a caller may hold it: PEM text, a JWK, or a KeyObject. */
export interface PublicKeyInfo {
  publicKey: string | JsonWebKey | KeyObject;
}

export function generateKeyPair(algorithm: SignatureAlgorithm, keyId?: string): GeneratedKeyPair {
  const pair =
    algorithm === 'ECDSA-P256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 0x10001 });
  const publicKeyPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const kid = keyId ?? jwkThumbprint(pair.publicKey);
  return {
    algorithm,
    privateKeyPem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem,
    publicJwk: publicKeyToJwk(publicKeyPem, kid),
    keyId: kid,
  };
}

/** Which of the two algorithms a key belongs to; anything else is refused. */
export function algorithmOfKey(key: KeyObject): SignatureAlgorithm {
  const details = key.asymmetricKeyDetails;
  if (key.asymmetricKeyType === 'ec' && details?.namedCurve === 'prime256v1') return 'ECDSA-P256';
  if (key.asymmetricKeyType === 'rsa' && (details?.modulusLength ?? 0) >= 2048) return 'RSA-2048';
  throw new SdfError('SDF_ERROR_INVALID_SIGNATURE', 'the key is neither ECDSA P-256 nor RSA of at least 2048 bits');
}

export function toPublicKeyObject(key: string | JsonWebKey | KeyObject): KeyObject {
  if (typeof key === 'string') return createPublicKey(key);
  if ('asymmetricKeyType' in key && typeof (key as KeyObject).export === 'function')
    return createPublicKey(key as KeyObject);
  return jwkToPublicKey(key as JsonWebKey);
}

export function publicKeyToJwk(pem: string | KeyObject, kid: string): PublicJwk {
  const key = typeof pem === 'string' ? createPublicKey(pem) : pem.type === 'public' ? pem : createPublicKey(pem);
  const algorithm = algorithmOfKey(key);
  const jwk = key.export({ format: 'jwk' });
  return { ...jwk, kid, alg: JWS_ALG[algorithm], use: 'sig' };
}

export function jwkToPublicKey(jwk: JsonWebKey): KeyObject {
  const { kty, crv, x, y, n, e } = jwk;
  // Only the public members go to the importer, so a private JWK never yields a private key here.
  const publicOnly: JsonWebKey = kty === 'EC' ? { kty, crv, x, y } : { kty, n, e };
  const key = createPublicKey({ key: publicOnly, format: 'jwk' });
  algorithmOfKey(key);
  return key;
}

/**
 * RFC 7638 thumbprint, base64url: a stable default key id. Kept synchronous (jose's is async only, and
 * key generation is synchronous in every caller: the CLI, the signing-key transaction); the unit spec
 * checks it against jose's calculateJwkThumbprint for EC and RSA keys.
 */
export function jwkThumbprint(key: KeyObject): string {
  const jwk = key.export({ format: 'jwk' });
  const members =
    jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { e: jwk.e, kty: jwk.kty, n: jwk.n };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}
