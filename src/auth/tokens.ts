import jwt from 'jsonwebtoken';

export interface TenantClaims {
  tenant_id: string;
  sub: string;
  iat: number;
  exp: number;
}

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
  claims: { tenant_id: string; sub: string },
  ttlSeconds: number,
): string {
  return jwt.sign({ tenant_id: claims.tenant_id }, secret, {
    algorithm: 'HS256',
    subject: claims.sub,
    expiresIn: ttlSeconds,
  });
}

/** S6: admin JWT, HS256 with the admin secret, claims sub, role "admin", iat, exp. */
export function signAdminToken(secret: string, subject: string, ttlSeconds: number): string {
  return jwt.sign({ role: 'admin' }, secret, { algorithm: 'HS256', subject, expiresIn: ttlSeconds });
}

function verify(token: string, secret: string): Record<string, unknown> | TokenFailure {
  try {
    // Pinning the algorithm keeps `alg: none` and RS/HS confusion out.
    const payload = jwt.verify(token, secret, { algorithms: ['HS256'] });
    return typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>) : 'invalid';
  } catch (err) {
    return err instanceof jwt.TokenExpiredError ? 'expired' : 'invalid';
  }
}

export function verifyTenantToken(token: string, secret: string): TenantClaims | TokenFailure {
  const p = verify(token, secret);
  if (typeof p === 'string') return p;
  if (typeof p.tenant_id !== 'string' || typeof p.sub !== 'string' || typeof p.exp !== 'number') return 'invalid';
  if (typeof p.iat !== 'number' || p.role !== undefined) return 'invalid';
  return p as unknown as TenantClaims;
}

export function verifyAdminToken(token: string, secret: string): AdminClaims | TokenFailure {
  const p = verify(token, secret);
  if (typeof p === 'string') return p;
  if (p.role !== 'admin' || typeof p.sub !== 'string' || typeof p.exp !== 'number') return 'invalid';
  return p as unknown as AdminClaims;
}
