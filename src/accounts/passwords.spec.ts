import { describe, expect, it } from 'vitest';
import { commonPasswordCount, isCommonPassword } from './common-passwords.js';
import { hashPassword, passwordProblems, verifyAgainstDummy, verifyPassword } from './passwords.js';

describe('passwords', () => {
  it('hashes with argon2id at no less than the OWASP minimum and verifies', async () => {
    const hash = await hashPassword('correct horse battery');
    expect(hash.startsWith('$argon2id$v=19$')).toBe(true);
    const m = /[$,]m=(\d+)/.exec(hash)![1];
    const t = /[$,]t=(\d+)/.exec(hash)![1];
    expect(Number(m)).toBeGreaterThanOrEqual(19_456);
    expect(Number(t)).toBeGreaterThanOrEqual(2);
    expect(await verifyPassword(hash, 'correct horse battery')).toBe(true);
    expect(await verifyPassword(hash, 'correct horse batterY')).toBe(false);
    expect(await verifyPassword('not a hash', 'x')).toBe(false);
    expect(await verifyAgainstDummy('anything')).toBe(false);
  });

  it('refuses short, long and common passwords with details', () => {
    expect(passwordProblems('short')).toEqual([{ path: '/password', message: expect.stringContaining('10') }]);
    expect(passwordProblems('x'.repeat(257))[0].message).toContain('256');
    expect(passwordProblems('Password123')[0].message).toContain('common');
    expect(passwordProblems('qwertyuiop')[0].message).toContain('common');
    expect(passwordProblems('Dragon2024!')).toEqual([]);
    expect(passwordProblems('dragon2024')[0].message).toContain('common');
    expect(passwordProblems('a unique passphrase of mine')).toEqual([]);
  });

  it('holds a few thousand generated entries', () => {
    expect(commonPasswordCount()).toBeGreaterThan(2000);
    expect(isCommonPassword('LETMEIN123')).toBe(true);
  });
});
