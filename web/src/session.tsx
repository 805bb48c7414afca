import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { setCredential } from './api/client.js';

const TAB_KEY = 'sdf.api-key';

interface Session {
  apiKey: string | null;
  /** Holds the key for the API client; `keepForTab` also keeps it in this tab's session storage. */
  signIn(apiKey: string, keepForTab: boolean): void;
  signOut(): void;
}

const SessionContext = createContext<Session | null>(null);

function initialKey(): string | null {
  try {
    return sessionStorage.getItem(TAB_KEY);
  } catch {
    return null;
  }
}

/**
 * The self-hosted credential: an API key held in memory, or, when the user asks, in this browser tab's
 * session storage (gone when the tab closes). Never in a cookie or localStorage.
 */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [apiKey, setApiKey] = useState<string | null>(() => {
    const key = initialKey();
    setCredential(key);
    return key;
  });
  const signIn = useCallback((key: string, keepForTab: boolean) => {
    setCredential(key);
    try {
      if (keepForTab) sessionStorage.setItem(TAB_KEY, key);
      else sessionStorage.removeItem(TAB_KEY);
    } catch {
      // Storage refused (private mode): memory alone holds the key.
    }
    setApiKey(key);
  }, []);
  const signOut = useCallback(() => {
    setCredential(null);
    try {
      sessionStorage.removeItem(TAB_KEY);
    } catch {
      // Nothing stored.
    }
    setApiKey(null);
  }, []);
  const value = useMemo(() => ({ apiKey, signIn, signOut }), [apiKey, signIn, signOut]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}
