import { api, unwrap } from '../api/client.js';
import type { Jwk } from './protocol.js';

const OWN_KEYS = /^\/\.well-known\/sdf-keys\/([^/]+)$/;

/**
 * The keys of a JWKS the user named. This service's own key lists are asked through the API client;
 * another issuer's URL is fetched directly (the page's policy allows exactly that origin, see below).
 */
export async function fetchJwks(url: string): Promise<Jwk[]> {
  const target = new URL(url, location.href);
  const own = target.origin === location.origin ? OWN_KEYS.exec(target.pathname) : null;
  let body: unknown;
  if (own) {
    body = await unwrap(
      api.GET('/.well-known/sdf-keys/{tenantSlug}', { params: { path: { tenantSlug: decodeURIComponent(own[1]!) } } }),
    );
  } else {
    const response = await fetch(target, { credentials: 'omit', headers: { Accept: 'application/json' } });
    if (!response.ok) throw new Error(`the key list answered HTTP ${response.status}`);
    body = await response.json();
  }
  const keys = (body as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new Error('that address does not serve a key list (a JWKS with "keys")');
  return keys.filter((key): key is Jwk => typeof key === 'object' && key !== null);
}

/**
 * The page's Content-Security-Policy lets it connect to this origin and to the origins named by `jwks`
 * on its own URL, nothing else. A key list elsewhere therefore takes one page load with that address.
 */
export function allowedByPolicy(url: string): boolean {
  const target = new URL(url, location.href);
  if (target.origin === location.origin) return true;
  return new URLSearchParams(location.search).getAll('jwks').some((value) => {
    try {
      return new URL(value).origin === target.origin;
    } catch {
      return false;
    }
  });
}
