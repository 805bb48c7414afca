import { useState, type FormEvent, type ReactNode } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { ApiProblem, api, unwrap } from '../api/client.js';
import { useSession } from '../session.js';

/** Self-hosted sign-in: the tenant's API key, checked against GET /tenant before it is kept. */
export function SignInPage() {
  const { signIn } = useSession();
  const [, navigate] = useLocation();
  const search = useSearch();
  const [key, setKey] = useState('');
  const [keep, setKeep] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const next = new URLSearchParams(search).get('next');

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const apiKey = key.trim();
    if (!apiKey) {
      setError('Enter your API key.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await unwrap(api.GET('/tenant', { headers: { 'X-API-Key': apiKey } }));
      signIn(apiKey, keep);
      navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/documents');
    } catch (e) {
      setError(
        e instanceof ApiProblem && e.status === 401
          ? 'That API key was not accepted. Check that you copied all of it.'
          : (e as Error).message,
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="narrow">
      <h1 tabIndex={-1}>Sign in</h1>
      <p className="lead">Sign in with your organisation&apos;s API key to upload, sign and manage documents.</p>
      <form className="panel-box" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor="api-key">API key</label>
          <p className="hint" id="api-key-hint">
            It starts with <code>sdf_k</code>. Your operator creates it; it is shown once.
          </p>
          <input
            id="api-key"
            type="password"
            autoComplete="off"
            spellCheck={false}
            value={key}
            onChange={(e) => setKey(e.target.value)}
            aria-describedby={error ? 'api-key-hint api-key-error' : 'api-key-hint'}
            aria-invalid={error ? true : undefined}
          />
          {error && (
            <p className="field-error" id="api-key-error" role="alert">
              {error}
            </p>
          )}
        </div>
        <div className="field checkbox">
          <label>
            <input type="checkbox" checked={keep} onChange={(e) => setKeep(e.target.checked)} /> Keep me signed in while
            this tab is open
          </label>
          <p className="hint">The key is never stored in a cookie or kept after you close the tab.</p>
        </div>
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </section>
  );
}

/** Pages that need a caller: without one, a way to sign in that comes back here. */
export function RequireSignIn({ children }: { children: ReactNode }) {
  const { apiKey } = useSession();
  const [location] = useLocation();
  if (apiKey) return <>{children}</>;
  return (
    <section className="narrow">
      <h1 tabIndex={-1}>Sign in to continue</h1>
      <p>
        This page shows your organisation&apos;s documents.{' '}
        <Link href={`/sign-in?next=${encodeURIComponent(location)}`}>Sign in with an API key</Link>, or{' '}
        <Link href="/read">read a file</Link> without an account.
      </p>
    </section>
  );
}
