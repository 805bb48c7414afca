import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { api, onCredentialLapse, setCredential, unwrap, type Schemas } from './api/client.js';

const TAB_KEY = 'sdf.api-key';

type Tokens = Pick<Schemas['TokenPairDto'], 'access_token' | 'refresh_token' | 'expires_in'>;

/**
 * The signed-in caller: an API key, or an account's access token (managed deployment). An account's
 * refresh token is never held here: it lives in the service's HttpOnly session cookie.
 */
export type SessionCredential =
  { kind: 'api-key'; apiKey: string } | { kind: 'account'; accessToken: string; expiresIn: number };

interface Session {
  credential: SessionCredential | null;
  signedIn: boolean;
  /** A page load is still asking the service whether a session cookie is there. */
  restoring: boolean;
  /** An API key; `keepForTab` also keeps it in this tab's session storage. */
  signInWithKey(apiKey: string, keepForTab: boolean): void;
  /** An account's tokens, from the login form or the SSO landing: the refresh token moves into the cookie. */
  signInWithTokens(tokens: Tokens): Promise<void>;
  /** Ends the current session (cookie or API key), then signs in with these tokens. */
  switchTo(tokens: Tokens): Promise<void>;
  /** Ends this session on the service; `everywhere` ends every session of the account ("log out everywhere"). */
  signOut(options?: { everywhere?: boolean }): Promise<void>;
  /**
   * The service no longer takes this page's credential (the session ended elsewhere or ran out, the key
   * was revoked): the page stays as it is, a sign-in is offered in place, and the refused requests are
   * sent again once it succeeds.
   */
  lapsed: boolean;
  /** Called by the sign-in in place: true once signed in again, false to give up (which signs out). */
  endLapse(signedInAgain: boolean): void;
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

/**
 * The cookie session (POST /v1/auth/session/refresh): with a refresh token, moves it into the cookie;
 * without, renews from the cookie. Null when there is no session. The header is the CSRF defence.
 */
async function sessionRefresh(refreshToken?: string): Promise<SessionCredential | null> {
  const answer = await unwrap(
    api.POST('/v1/auth/session/refresh', {
      body: refreshToken ? { refresh_token: refreshToken } : {},
      params: { header: { 'X-SDF-Session': '1' } },
    }),
  );
  return answer ? { kind: 'account', accessToken: answer.access_token, expiresIn: Number(answer.expires_in) } : null;
}

const RENEWAL_LOCK = 'sdf.session-renewal';
const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('sdf.session') : null;
let renewing: Promise<SessionCredential | null> | null = null;

/**
 * The cookie renewal, one at a time: one in flight per tab (callers share it), and across this origin's
 * tabs one after the other (a Web Lock), so no two rotate the same cookie at once. A renewed access token
 * is handed to the other tabs, whose own one the rotation has just ended. A page left mid-renewal can
 * still leave the spent token in the cookie; the service answers that one again for a few seconds.
 */
function renewFromCookie(): Promise<SessionCredential | null> {
  renewing ??= (async () => {
    try {
      const locks = typeof navigator === 'undefined' ? undefined : navigator.locks;
      const renewed = locks ? await locks.request(RENEWAL_LOCK, () => sessionRefresh()) : await sessionRefresh();
      if (renewed?.kind === 'account')
        channel?.postMessage({ accessToken: renewed.accessToken, expiresIn: renewed.expiresIn });
      return renewed;
    } finally {
      renewing = null;
    }
  })();
  return renewing;
}

function storedKey(): SessionCredential | null {
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
  const [credential, setState] = useState<SessionCredential | null>(() => apply(storedKey()));
  const [restoring, setRestoring] = useState(() => credential === null);
  const [lapse, setLapse] = useState<{ promise: Promise<boolean>; resolve: (again: boolean) => void } | null>(null);
  const lapseRef = useRef(lapse);
  lapseRef.current = lapse;
  const credentialRef = useRef(credential);
  credentialRef.current = credential;

  /** One lapse at a time: every request refused meanwhile waits for the same sign-in. */
  const raiseLapse = useCallback((): Promise<boolean> => {
    if (lapseRef.current) return lapseRef.current.promise;
    let resolve!: (again: boolean) => void;
    const promise = new Promise<boolean>((r) => (resolve = r));
    const next = { promise, resolve };
    lapseRef.current = next;
    setLapse(next);
    return promise;
  }, []);

  useEffect(() => {
    onCredentialLapse(async () => {
      const current = credentialRef.current;
      if (!current) return false;
      // An access token that ran out while the tab slept: the cookie renews it without asking anything.
      if (current.kind === 'account') {
        const renewed = await renewFromCookie().catch(() => null);
        if (renewed) {
          setState(apply(renewed));
          return true;
        }
      }
      return raiseLapse();
    });
    return () => onCredentialLapse(null);
  }, [raiseLapse]);

  // A page load: the session cookie (managed deployment only). Tokens in the address are never taken
  // here: only the SSO landing page uses them, and it asks before replacing a session (see sso.ts).
  useEffect(() => {
    if (!restoring) return;
    const restore = async (): Promise<SessionCredential | null> => {
      const health = await unwrap(api.GET('/health'));
      return health?.deployment_mode === 'managed' ? renewFromCookie() : null;
    };
    restore()
      .then((restored) => setState((current) => current ?? apply(restored)))
      .catch(() => undefined)
      .finally(() => setRestoring(false));
  }, [restoring]);

  const signInWithKey = useCallback((key: string, keepForTab: boolean) => {
    try {
      if (keepForTab) sessionStorage.setItem(TAB_KEY, key);
      else sessionStorage.removeItem(TAB_KEY);
    } catch {
      // Storage refused (private mode): memory alone holds the key.
    }
    setState(apply({ kind: 'api-key', apiKey: key }));
  }, []);

  const signInWithTokens = useCallback(async (tokens: Tokens) => {
    setState(apply(await sessionRefresh(tokens.refresh_token)));
  }, []);

  const switchTo = useCallback(async (tokens: Tokens) => {
    await api.POST('/v1/auth/session/logout', { params: { header: { 'X-SDF-Session': '1' } } }).catch(() => undefined);
    try {
      sessionStorage.removeItem(TAB_KEY);
    } catch {
      // Nothing stored.
    }
    setState(apply(await sessionRefresh(tokens.refresh_token)));
  }, []);

  const signOut = useCallback(
    async (options: { everywhere?: boolean } = {}) => {
      if (credential?.kind === 'account') {
        // Ends the session (or, with the access token, all of them) on the service, which clears the cookie.
        if (options.everywhere) await unwrap(api.DELETE('/v1/auth/sessions'));
        // The cookie logout: it works even when the access token has expired, and clears the cookie.
        else
          await api
            .POST('/v1/auth/session/logout', { params: { header: { 'X-SDF-Session': '1' } } })
            .catch(() => undefined);
      }
      try {
        sessionStorage.removeItem(TAB_KEY);
      } catch {
        // Nothing stored.
      }
      setState(apply(null));
    },
    [credential],
  );

  useEffect(() => {
    if (credential?.kind !== 'account') return;
    const delay = Math.max(5, credential.expiresIn - 60) * 1000;
    const timer = setTimeout(() => {
      // A refused renewal keeps the page (and what is typed in it) and asks for a sign-in in place.
      renewFromCookie()
        .then((renewed) => (renewed ? setState(apply(renewed)) : void raiseLapse()))
        .catch(() => void raiseLapse());
    }, delay);
    return () => clearTimeout(timer);
  }, [credential, raiseLapse]);

  // Another tab renewed the shared cookie session, which ended this tab's access token: take its successor.
  useEffect(() => {
    if (!channel) return;
    const adopt = (event: MessageEvent<{ accessToken?: unknown; expiresIn?: unknown }>) => {
      const { accessToken, expiresIn } = event.data ?? {};
      if (typeof accessToken !== 'string' || typeof expiresIn !== 'number') return;
      setState((current) =>
        current?.kind === 'account' ? apply({ kind: 'account', accessToken, expiresIn }) : current,
      );
    };
    channel.addEventListener('message', adopt);
    return () => channel.removeEventListener('message', adopt);
  }, []);

  // Signed out (here, or by "log out everywhere"): nothing waits for a sign-in any more.
  useEffect(() => {
    if (credential || !lapseRef.current) return;
    lapseRef.current.resolve(false);
    lapseRef.current = null;
    setLapse(null);
  }, [credential]);

  const endLapse = useCallback(
    (signedInAgain: boolean) => {
      const current = lapseRef.current;
      lapseRef.current = null;
      setLapse(null);
      if (!signedInAgain) void signOut();
      current?.resolve(signedInAgain);
    },
    [signOut],
  );

  const value = useMemo(
    () => ({
      credential,
      signedIn: credential !== null,
      restoring,
      signInWithKey,
      signInWithTokens,
      switchTo,
      signOut,
      lapsed: lapse !== null,
      endLapse,
    }),
    [credential, restoring, signInWithKey, signInWithTokens, switchTo, signOut, lapse, endLapse],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}
