import { createHash, randomBytes } from 'node:crypto';

/** 256 bits of randomness, base64url: refresh tokens, mail tokens, TOTP login tickets. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Hex SHA-256. Enough for high-entropy random tokens (no dictionary to try); passwords use argon2id. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
