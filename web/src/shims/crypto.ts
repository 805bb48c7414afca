/**
 * The part of `node:crypto` the format core uses to read and verify files, for the browser: SHA-256
 * (synchronous, as the core calls it) and public keys from JWKs. A public key is its JWK with the
 * members Node's KeyObject offers (`type`, `asymmetricKeyType`, `asymmetricKeyDetails`, `export`), so
 * `jose` imports it as a JWK into WebCrypto. Signing and key generation stay on the server.
 */
import { sha256 } from '@noble/hashes/sha2.js';

type Encoding = 'hex' | 'base64' | 'base64url';

class Sha256Hash {
  private readonly hash = sha256.create();
  update(data: Uint8Array | string): this {
    this.hash.update(typeof data === 'string' ? new TextEncoder().encode(data) : data);
    return this;
  }
  digest(): Buffer;
  digest(encoding: Encoding): string;
  digest(encoding?: Encoding): Buffer | string {
    const bytes = Buffer.from(this.hash.digest());
    return encoding ? bytes.toString(encoding) : bytes;
  }
}

export function createHash(algorithm: string): Sha256Hash {
  if (algorithm !== 'sha256') throw new Error(`hash ${algorithm} is not available in the browser`);
  return new Sha256Hash();
}

export interface JsonWebKey {
  kty?: string;
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
  [member: string]: unknown;
}

/** A public key as the core sees it: plain JWK members, with KeyObject's accessors beside them. */
export type KeyObject = JsonWebKey & {
  readonly type: 'public';
  readonly asymmetricKeyType: 'ec' | 'rsa' | undefined;
  readonly asymmetricKeyDetails: { namedCurve?: string; modulusLength?: number };
  export(options: { format: 'jwk' }): JsonWebKey;
};

const CURVES: Record<string, string> = { 'P-256': 'prime256v1', 'P-384': 'secp384r1', 'P-521': 'secp521r1' };

function modulusBits(n: string): number {
  const bytes = Buffer.from(n, 'base64url');
  let start = 0;
  while (start < bytes.length && bytes[start] === 0) start++;
  if (start === bytes.length) return 0;
  return (bytes.length - start - 1) * 8 + (32 - Math.clz32(bytes[start]!));
}

export function createPublicKey(input: unknown): KeyObject {
  const options = input as { key?: unknown; format?: string };
  if (typeof input === 'string' || options?.format !== 'jwk' || typeof options.key !== 'object' || !options.key) {
    throw new TypeError('only JWK public keys can be used in the browser');
  }
  const jwk = options.key as JsonWebKey;
  const members: JsonWebKey =
    jwk.kty === 'EC' ? { kty: 'EC', crv: jwk.crv, x: jwk.x, y: jwk.y } : { kty: jwk.kty, n: jwk.n, e: jwk.e };
  for (const [name, value] of Object.entries(members)) {
    if (typeof value !== 'string' || value === '') throw new TypeError(`the JWK has no ${name}`);
  }
  const type = members.kty === 'EC' ? 'ec' : members.kty === 'RSA' ? 'rsa' : undefined;
  const details = type === 'ec' ? { namedCurve: CURVES[members.crv!] } : { modulusLength: modulusBits(members.n!) };
  // Not enumerable: jose sees a plain JWK object and imports exactly the public members.
  Object.defineProperties(members, {
    type: { value: 'public' },
    asymmetricKeyType: { value: type },
    asymmetricKeyDetails: { value: details },
    export: { value: () => ({ ...members }) },
  });
  return members as KeyObject;
}

export function generateKeyPairSync(): never {
  throw new Error('keys are generated on the server');
}

export default { createHash, createPublicKey, generateKeyPairSync };
