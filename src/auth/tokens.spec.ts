import { generateKeyPairSync, randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { describe, expect, it } from 'vitest';
import { hmacKey } from '../common/hmac-key.js';
import { signAdminToken, signTenantToken, verifyAdminToken, verifyTenantToken } from './tokens.js';

const secret = randomBytes(32).toString('hex');
const TTL = 3600;

describe('HS256 tokens signed and checked with the secret as a key object', () => {
  it('are the tokens jsonwebtoken makes from the secret string, both ways', () => {
    const token = signTenantToken(secret, { tenant_id: 't1', sub: 'user-1' }, TTL);
    expect(jwt.verify(token, secret, { algorithms: ['HS256'] })).toMatchObject({ tenant_id: 't1', sub: 'user-1' });

    const fromString = jwt.sign({ tenant_id: 't2' }, secret, { algorithm: 'HS256', subject: 'user-2', expiresIn: 60 });
    expect(verifyTenantToken(fromString, secret, TTL)).toMatchObject({ tenant_id: 't2', sub: 'user-2' });

    // Byte for byte: the same claims give the same signature whichever form the secret takes.
    const claims = { tenant_id: 't3', sub: 'u', iat: 1_800_000_000, exp: 1_800_000_060 };
    expect(jwt.sign(claims, hmacKey(secret), { algorithm: 'HS256' })).toBe(
      jwt.sign(claims, secret, { algorithm: 'HS256' }),
    );
  });

  it('refuse another secret, alg none, another HMAC and an RSA signature', () => {
    const other = randomBytes(32).toString('hex');
    expect(verifyTenantToken(signTenantToken(other, { tenant_id: 't', sub: 'u' }, TTL), secret, TTL)).toBe('invalid');
    const none = jwt.sign({ tenant_id: 't', sub: 'u' }, '', { algorithm: 'none' });
    expect(verifyTenantToken(none, secret, TTL)).toBe('invalid');
    const hs512 = jwt.sign({ tenant_id: 't', sub: 'u' }, secret, { algorithm: 'HS512', expiresIn: 60 });
    expect(verifyTenantToken(hs512, secret, TTL)).toBe('invalid');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rs256 = jwt.sign({ tenant_id: 't', sub: 'u' }, privateKey, { algorithm: 'RS256', expiresIn: 60 });
    expect(verifyTenantToken(rs256, secret, TTL)).toBe('invalid');
  });

  it('keep admin and tenant tokens apart, and expired ones out', () => {
    const admin = signAdminToken(secret, 'operator', 60);
    expect(verifyAdminToken(admin, secret)).toMatchObject({ sub: 'operator', role: 'admin' });
    expect(verifyTenantToken(admin, secret, TTL)).toBe('invalid');
    expect(verifyAdminToken(signTenantToken(secret, { tenant_id: 't', sub: 'u' }, TTL), secret)).toBe('invalid');
    expect(verifyAdminToken(signAdminToken(secret, 'operator', -10), secret)).toBe('expired');
  });

  it('make one key per secret and stay right past the number of keys kept', () => {
    expect(hmacKey(secret)).toBe(hmacKey(secret));
    const secrets = Array.from({ length: 40 }, () => randomBytes(16).toString('hex'));
    const tokens = secrets.map((s) => signTenantToken(s, { tenant_id: 't', sub: 'u' }, TTL));
    tokens.forEach((token, i) => {
      expect(verifyTenantToken(token, secrets[i]!, TTL)).toMatchObject({ tenant_id: 't' });
      expect(verifyTenantToken(token, secrets[(i + 1) % secrets.length]!, TTL)).toBe('invalid');
    });
  });
});
