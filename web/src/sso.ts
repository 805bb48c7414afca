/**
 * Single sign-on in the browser. A sign-in is started here with a one-time state kept in this tab's
 * session storage and carried through the identity provider in the RelayState; the service sends the
 * browser back to the landing page (`/app/sso?org=...&state=...`) with the tokens in the URL fragment.
 * Tokens are taken only there, and only when the state is the one this tab set before leaving: a link
 * with someone else's tokens (a login CSRF) is never used, whichever page it points at.
 */

/** The landing page, below the front end's base. */
export const SSO_LANDING = '/sso';
const LANDING_PATH = `/app${SSO_LANDING}`;
const STATE_KEY = 'sdf.sso-state';

export interface LandedTokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

/** What the page load found in its address. */
export type Landing =
  | { kind: 'accepted'; org: string | null; tokens: LandedTokens }
  /** Tokens this tab did not ask for: not used. */
  | { kind: 'refused'; org: string | null }
  /** The landing page without tokens (the identity provider sent the person back without signing in). */
  | { kind: 'empty'; org: string | null };

function randomState(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Leaves for the organisation's identity provider; the landing accepts the answer to this sign-in only. */
export function startSso(slug: string): void {
  const state = randomState();
  try {
    sessionStorage.setItem(STATE_KEY, state);
  } catch {
    // Storage refused: the landing will refuse too, and say so.
  }
  const relay = `${LANDING_PATH}?${new URLSearchParams({ org: slug, state }).toString()}`;
  location.assign(`/saml/${encodeURIComponent(slug)}/login?RelayState=${encodeURIComponent(relay)}`);
}

/** The state this tab set, spent on the first look whatever the answer (one sign-in, one landing). */
function spendState(): string | null {
  try {
    const state = sessionStorage.getItem(STATE_KEY);
    sessionStorage.removeItem(STATE_KEY);
    return state;
  } catch {
    return null;
  }
}

/**
 * Read once as the page loads: any tokens in the fragment leave the address bar and the history entry at
 * once, on every page; they are kept only on the landing page with this tab's state.
 */
function readLanding(): Landing | null {
  const hash = location.hash;
  const carriesTokens = /(?:^#|&)(?:access_token|refresh_token)=/.test(hash);
  if (carriesTokens) history.replaceState(history.state, '', location.pathname + location.search);
  if (location.pathname !== LANDING_PATH) return null;
  const query = new URLSearchParams(location.search);
  const org = query.get('org');
  const expected = spendState();
  if (!carriesTokens) return { kind: 'empty', org };
  const fields = new URLSearchParams(hash.slice(1));
  const access = fields.get('access_token');
  const refresh = fields.get('refresh_token');
  const state = query.get('state');
  if (!access || !refresh || !state || expected === null || state !== expected) return { kind: 'refused', org };
  return {
    kind: 'accepted',
    org,
    tokens: { access_token: access, refresh_token: refresh, expires_in: Number(fields.get('expires_in') ?? 900) },
  };
}

/** This page load's landing, read before anything renders. */
let current: Landing | null = typeof location === 'undefined' ? null : readLanding();

export function currentLanding(): Landing | null {
  return current;
}

/** The tokens are used (or declined) once: a refresh token presented twice would end every session. */
export function spendLanding(): void {
  if (current) current = { kind: 'empty', org: current.org };
}
