import { createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
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

  it('keyed hash: HMAC-SHA-256 under an HKDF key of the master key and purpose, named by key id', () => {
    const box = new CryptoBox(new Map([['1', k1]]), '1');
    const hash = box.keyedHash('webhook-secret', 'password123');
    expect(hash).toMatch(/^v1\.[0-9a-f]{64}$/);
    const derived = Buffer.from(hkdfSync('sha256', k1, Buffer.alloc(0), 'sdf keyed-hash v1 webhook-secret', 32));
    expect(hash).toBe('v1.' + createHmac('sha256', derived).update('password123').digest('hex'));
    // Deterministic, but not the plain hash, not keyed by the master key itself, and per purpose and key.
    expect(box.keyedHash('webhook-secret', 'password123')).toBe(hash);
    expect(hash).not.toContain(createHash('sha256').update('password123').digest('hex'));
    expect(hash).not.toContain(createHmac('sha256', k1).update('password123').digest('hex'));
    expect(box.keyedHash('other-purpose', 'password123')).not.toBe(hash);
    expect(new CryptoBox(new Map([['1', k2]]), '1').keyedHash('webhook-secret', 'password123')).not.toBe(hash);
  });

  it('keyed hash: one made under an older master key, or none at all, is stale', () => {
    const old = new CryptoBox(new Map([['1', k1]]), '1');
    const rotated = new CryptoBox(
      new Map([
        ['2', k2],
        ['1', k1],
      ]),
      '2',
    );
    const hash = old.keyedHash('webhook-secret', 'x');
    expect(old.keyedHashIsStale(hash)).toBe(false);
    expect(rotated.keyedHashIsStale(hash)).toBe(true);
    expect(rotated.keyedHashIsStale(rotated.keyedHash('webhook-secret', 'x'))).toBe(false);
    expect(rotated.keyedHashIsStale(null)).toBe(true);
    expect(rotated.keyedHashIsStale(createHash('sha256').update('x').digest('hex'))).toBe(true);
  });
});
