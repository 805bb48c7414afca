import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** S6: `sdf_k` + 43 base64url characters (32 random bytes). */
export const API_KEY_PATTERN = /^sdf_k[A-Za-z0-9_-]{43}$/;
export const KEY_PREFIX_LENGTH = 8;

export interface MintedKey {
  key: string;
  prefix: string;
  salt: string;
  hash: string;
}

export function hashApiKey(salt: string, key: string): string {
  return createHash('sha256').update(Buffer.from(salt, 'hex')).update(key, 'utf8').digest('hex');
}

export function mintApiKey(): MintedKey {
  const key = 'sdf_k' + randomBytes(32).toString('base64url');
  const salt = randomBytes(16).toString('hex');
  return { key, prefix: key.slice(0, KEY_PREFIX_LENGTH), salt, hash: hashApiKey(salt, key) };
}

/** Timing-safe comparison of a presented key against a stored salted hash. */
export function apiKeyMatches(key: string, salt: string, storedHash: string): boolean {
  const presented = Buffer.from(hashApiKey(salt, key), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
