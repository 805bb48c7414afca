/** A RelayState return path is at most this long. */
export const MAX_RETURN_PATH = 512;
/** What a configured return path may look like: an absolute path, no host, no dot segments. */
export const RETURN_PATH_PATTERN = /^\/(?:[A-Za-z0-9._~-]+\/?)*$/;

/**
 * The RelayState as a return path when the tenant's allow-list admits it, else null. Only a path on
 * the service's own origin can pass ("//host", "/\\host", schemes and dot segments cannot), and it
 * must equal an allowed path or lie under one that ends in "/". A query string may follow.
 */
export function allowedReturnPath(relayState: string, allowed: readonly string[]): string | null {
  if (relayState.length === 0 || relayState.length > MAX_RETURN_PATH) return null;
  if (!relayState.startsWith('/') || relayState.startsWith('//')) return null;
  if (/[\\#\s]/.test(relayState) || [...relayState].some((c) => c.charCodeAt(0) < 0x20 || c === '\u007f')) return null;
  const q = relayState.indexOf('?');
  const path = q === -1 ? relayState : relayState.slice(0, q);
  if (!RETURN_PATH_PATTERN.test(path) || path.split('/').some((s) => s === '.' || s === '..')) return null;
  const ok = allowed.some((a) => path === a || (a.endsWith('/') && path.startsWith(a)));
  return ok ? relayState : null;
}
