import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CryptoBox } from './crypto-box.js';

describe('CryptoBox (S7)', () => {
  const k1 = randomBytes(32);
  const k2 = randomBytes(32);

  it('round-trips and never shows the plaintext', () => {
    const box = new CryptoBox(new Map([['1', k1]]), '1');
    const sealed = box.encrypt('-----BEGIN PRIVATE KEY-----secret');
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain('PRIVATE');
    expect(box.decryptString(sealed)).toBe('-----BEGIN PRIVATE KEY-----secret');
  });

  it('detects tampering and binds associated data', () => {
    const box = new CryptoBox(new Map([['1', k1]]), '1');
    const sealed = box.encrypt('payload', 'tenant-a');
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[3], 'base64url');
    ct[0] ^= 1;
    expect(() => box.decrypt([...parts.slice(0, 3), ct.toString('base64url')].join('.'), 'tenant-a')).toThrow();
    expect(() => box.decrypt(sealed, 'tenant-b')).toThrow();
  });

  it('decrypts values sealed under a previous master key and reseals under the current one', () => {
    const old = new CryptoBox(new Map([['1', k1]]), '1');
    const sealed = old.encrypt('value');
    const rotated = new CryptoBox(
      new Map([
        ['2', k2],
        ['1', k1],
      ]),
      '2',
    );
    expect(rotated.needsRotation(sealed)).toBe(true);
    const resealed = rotated.reseal(sealed);
    expect(CryptoBox.keyIdOf(resealed)).toBe('2');
    expect(new CryptoBox(new Map([['2', k2]]), '2').decryptString(resealed)).toBe('value');
  });
});
