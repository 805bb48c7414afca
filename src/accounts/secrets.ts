import { createHash, createHmac, randomBytes } from 'node:crypto';

/** 256 bits of randomness, base64url: refresh tokens, mail tokens, TOTP login tickets. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The refresh token of a rotation's successor: an HMAC of its predecessor's under a service secret, so
 * as unguessable as a random one to anyone without that secret, yet computable again from the
 * predecessor (the cookie renewal's repeat within its window, see SessionsService.refresh).
 */
export function successorToken(key: string, previous: string): string {
  return createHmac('sha256', key).update(`sdf-session-successor\0${previous}`, 'utf8').digest('base64url');
}

/** Hex SHA-256. Enough for high-entropy random tokens (no dictionary to try); passwords use argon2id. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
