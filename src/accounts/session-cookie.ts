import type { Request, Response } from 'express';

/**
 * The web front end's session: its refresh token lives in this cookie, never in the page's JavaScript.
 * HttpOnly (no script reads it), Secure, SameSite=Strict, and sent only to the session paths.
 */
export const SESSION_COOKIE = 'sdf_refresh';
export const SESSION_PATH = '/v1/auth/session';

/** The header a page of this origin sends with every cookie-session call (the CSRF defence). */
export const SESSION_HEADER = 'X-SDF-Session';

export function setSessionCookie(res: Response, refreshToken: string): void {
  res.append(
    'Set-Cookie',
    `${SESSION_COOKIE}=${encodeURIComponent(refreshToken)}; Path=${SESSION_PATH}; HttpOnly; Secure; SameSite=Strict`,
  );
}

export function clearSessionCookie(res: Response): void {
  res.append('Set-Cookie', `${SESSION_COOKIE}=; Path=${SESSION_PATH}; HttpOnly; Secure; SameSite=Strict; Max-Age=0`);
}

export function sessionCookie(req: Request): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === SESSION_COOKIE) {
      try {
        return decodeURIComponent(part.slice(at + 1).trim()) || undefined;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * The cookie alone is not enough. Where the browser says where the call comes from (Origin,
 * Sec-Fetch-Site), that must be this origin ('foreign' otherwise); and the call must carry
 * SESSION_HEADER ('no-header' otherwise), which no cross-site form or plain link can send and which a
 * script of another origin cannot send without this origin's CORS consent (never given).
 */
export function sessionCallRefusal(req: Request): 'foreign' | 'no-header' | null {
  const site = req.get('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') return 'foreign';
  const origin = req.get('origin');
  if (origin !== undefined && origin !== `${req.protocol}://${req.get('host')}`) return 'foreign';
  return req.get(SESSION_HEADER) ? null : 'no-header';
}
