import jwt from 'jsonwebtoken';
import { hmacKey } from '../common/hmac-key.js';

export interface TenantClaims {
  tenant_id: string;
  sub: string;
  iat: number;
  exp: number;
  /** Managed deployment: the session the access token belongs to, and the user's role. */
  sid?: string;
  role?: 'owner' | 'admin' | 'member';
  /** Managed deployment: present (true) while the user's email address is not verified: reads only. */
  unverified?: true;
}

/** What a `sub` may hold: it becomes the audit actor `user:<sub>`, so no NUL, no spaces, bounded. */
export const SUBJECT = /^[A-Za-z0-9._@:-]{1,128}$/;
/** Clock skew tolerated between the token's issuer and this server. */
export const TOKEN_SKEW_SECONDS = 60;
const USER_ROLES = new Set(['owner', 'admin', 'member']);

export interface AdminClaims {
  sub: string;
  role: 'admin';
  iat: number;
  exp: number;
}

export type TokenFailure = 'invalid' | 'expired';

/** S6: tenant JWT, HS256, claims tenant_id, sub, iat, exp. */
export function signTenantToken(
  secret: string,
  claims: { tenant_id: string; sub: string; sid?: string; role?: TenantClaims['role']; unverified?: boolean },
  ttlSeconds: number,
): string {
  // Managed access tokens add the session (checked against revocations), the user's role and, until the
  // address is verified, `unverified` (such a token may only read).
  const extra = claims.sid
    ? { sid: claims.sid, role: claims.role, ...(claims.unverified ? { unverified: true } : {}) }
    : {};
  return jwt.sign({ tenant_id: claims.tenant_id, ...extra }, hmacKey(secret), {
    algorithm: 'HS256',
    subject: claims.sub,
    expiresIn: ttlSeconds,
  });
}

/** S6: admin JWT, HS256 with the admin secret, claims sub, role "admin", iat, exp. */
export function signAdminToken(secret: string, subject: string, ttlSeconds: number): string {
  return jwt.sign({ role: 'admin' }, hmacKey(secret), { algorithm: 'HS256', subject, expiresIn: ttlSeconds });
}

function verify(token: string, secret: string): Record<string, unknown> | TokenFailure {
  try {
    // Pinning the algorithm keeps `alg: none` and RS/HS confusion out.
    const payload = jwt.verify(token, hmacKey(secret), { algorithms: ['HS256'] });
    return typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>) : 'invalid';
  } catch (err) {
    return err instanceof jwt.TokenExpiredError ? 'expired' : 'invalid';
  }
}

/**
 * S6 tenant JWT. Beyond the signature and expiry: the lifetime (exp - iat) may not exceed the
 * configured one plus the skew, iat may not lie in the future, and `sub` must be a safe identifier.
 */
export function verifyTenantToken(token: string, secret: string, maxTtlSeconds: number): TenantClaims | TokenFailure {
  const p = verify(token, secret);
  if (typeof p === 'string') return p;
  if (typeof p.tenant_id !== 'string' || typeof p.sub !== 'string' || !SUBJECT.test(p.sub)) return 'invalid';
  if (!isLifetimeWithin(p, maxTtlSeconds)) return 'invalid';
  if (p.role !== undefined && !(typeof p.role === 'string' && USER_ROLES.has(p.role))) return 'invalid';
  if (p.sid !== undefined && !(typeof p.sid === 'string' && SUBJECT.test(p.sid))) return 'invalid';
  if (p.unverified !== undefined && p.unverified !== true) return 'invalid';
  return p as unknown as TenantClaims;
}

/** Admin JWT: role "admin" and no tenant (a tenant-shaped token never passes as an admin one). */
export function verifyAdminToken(token: string, secret: string): AdminClaims | TokenFailure {
  const p = verify(token, secret);
  if (typeof p === 'string') return p;
  if (p.role !== 'admin' || p.tenant_id !== undefined || typeof p.sub !== 'string' || typeof p.exp !== 'number') {
    return 'invalid';
  }
  return p as unknown as AdminClaims;
}

function isLifetimeWithin(p: Record<string, unknown>, maxTtlSeconds: number): boolean {
  const { iat, exp } = p;
  if (typeof iat !== 'number' || typeof exp !== 'number' || !Number.isFinite(iat) || !Number.isFinite(exp)) {
    return false;
  }
  const now = Math.floor(Date.now() / 1000);
  return iat <= now + TOKEN_SKEW_SECONDS && exp - iat <= maxTtlSeconds + TOKEN_SKEW_SECONDS;
}
