import argon2 from 'argon2';
import type { ErrorDetail } from '../common/errors.js';
import { isCommonPassword } from './common-passwords.js';

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 256;

/**
 * argon2id at OWASP's minimum recommendation (19 MiB, 2 passes, 1 lane): m=19456 KiB, t=2, p=1.
 * Cost goes up with these numbers only; stored hashes carry their own parameters.
 */
const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, ARGON2_OPTIONS);
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

let dummy: Promise<string> | undefined;

/**
 * A login for an unknown address verifies against this hash, so it costs what a wrong password costs
 * and the answer's timing does not tell which addresses have accounts.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummy ??= hashPassword('no account has this password: ' + Math.random().toString(36));
  await verifyPassword(await dummy, password);
  return false;
}

/** The password rules (M1): 10 to 256 characters, not a common password. Returns the problems. */
export function passwordProblems(password: string, path = '/password'): ErrorDetail[] {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return [{ path, message: `must be at least ${PASSWORD_MIN_LENGTH} characters` }];
  if (length > PASSWORD_MAX_LENGTH) return [{ path, message: `must be at most ${PASSWORD_MAX_LENGTH} characters` }];
  if (isCommonPassword(password)) return [{ path, message: 'is too common; choose another' }];
  return [];
}
