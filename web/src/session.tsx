import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, setCredential, type Schemas } from './api/client.js';

const TAB_KEY = 'sdf.api-key';

type Tokens = Pick<Schemas['TokenPairDto'], 'access_token' | 'refresh_token' | 'expires_in'>;

/** The signed-in caller: an API key, or an account's tokens (managed deployment). */
export type SessionCredential =
  | { kind: 'api-key'; apiKey: string }
  | { kind: 'account'; accessToken: string; refreshToken: string; expiresIn: number };

interface Session {
  credential: SessionCredential | null;
  signedIn: boolean;
  /** An API key; `keepForTab` also keeps it in this tab's session storage. */
  signInWithKey(apiKey: string, keepForTab: boolean): void;
  /** An account's tokens, from the login form or the SSO landing. */
  signInWithTokens(tokens: Tokens): void;
  signOut(): Promise<void>;
}

const SessionContext = createContext<Session | null>(null);

function apply(credential: SessionCredential | null): SessionCredential | null {
  setCredential(
    credential === null
      ? null
      : credential.kind === 'api-key'
        ? { kind: 'api-key', apiKey: credential.apiKey }
        : { kind: 'account', accessToken: credential.accessToken },
  );
  return credential;
}

const fromTokens = (tokens: Tokens): SessionCredential => ({
  kind: 'account',
  accessToken: tokens.access_token,
  refreshToken: tokens.refresh_token,
  expiresIn: Number(tokens.expires_in),
});

/**
 * The SSO landing: the service redirects to `/app/#access_token=...&refresh_token=...`. The tokens are
 * read once and the fragment leaves the address bar and the history entry at once.
 */
function takeFragmentTokens(): Tokens | null {
  if (!location.hash.includes('access_token=')) return null;
  const fields = new URLSearchParams(location.hash.slice(1));
  history.replaceState(history.state, '', location.pathname + location.search);
  const access = fields.get('access_token');
  const refresh = fields.get('refresh_token');
  if (!access || !refresh) return null;
  return { access_token: access, refresh_token: refresh, expires_in: Number(fields.get('expires_in') ?? 900) };
}

function initialCredential(): SessionCredential | null {
  const landed = takeFragmentTokens();
  if (landed) return fromTokens(landed);
  try {
    const key = sessionStorage.getItem(TAB_KEY);
    return key ? { kind: 'api-key', apiKey: key } : null;
  } catch {
    return null;
  }
}

/**
 * Holds the caller's credential in memory (an API key also in this tab's session storage when asked),
 * never in a cookie or localStorage. An account's access token is renewed with its refresh token a
 * minute before it expires; a refused renewal signs out.
 */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [credential, setState] = useState<SessionCredential | null>(() => apply(initialCredential()));

  const signInWithKey = useCallback((key: string, keepForTab: boolean) => {
    try {
      if (keepForTab) sessionStorage.setItem(TAB_KEY, key);
      else sessionStorage.removeItem(TAB_KEY);
    } catch {
      // Storage refused (private mode): memory alone holds the key.
    }
    setState(apply({ kind: 'api-key', apiKey: key }));
  }, []);

  const signInWithTokens = useCallback((tokens: Tokens) => setState(apply(fromTokens(tokens))), []);

  const signOut = useCallback(async () => {
    if (credential?.kind === 'account') {
      // Ends the session on the service too (with its access token); signed out here whatever it answers.
      await api.POST('/v1/auth/logout').catch(() => undefined);
    }
    try {
      sessionStorage.removeItem(TAB_KEY);
    } catch {
      // Nothing stored.
    }
    setState(apply(null));
  }, [credential]);

  useEffect(() => {
    if (credential?.kind !== 'account') return;
    const delay = Math.max(5, credential.expiresIn - 60) * 1000;
    const timer = setTimeout(() => {
      api
        .POST('/v1/auth/refresh', { body: { refresh_token: credential.refreshToken } })
        .then(({ data }) => setState(apply(data ? fromTokens(data) : null)))
        .catch(() => setState(apply(null)));
    }, delay);
    return () => clearTimeout(timer);
  }, [credential]);

  const value = useMemo(
    () => ({ credential, signedIn: credential !== null, signInWithKey, signInWithTokens, signOut }),
    [credential, signInWithKey, signInWithTokens, signOut],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}
