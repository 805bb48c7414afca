import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { ApiProblem, api, unwrap } from '../api/client.js';
import { useSession } from '../session.js';
import { startSso } from '../sso.js';
import { FieldError } from '../field-error.js';

/** The deployment, from GET /health: the managed one offers account sign-in beside API keys. */
export function useDeploymentMode(): 'self-hosted' | 'managed' | undefined {
  const { data } = useQuery({ queryKey: ['health'], queryFn: () => unwrap(api.GET('/health')), staleTime: Infinity });
  return data?.deployment_mode;
}

function useNext(): () => void {
  const [, navigate] = useLocation();
  const next = new URLSearchParams(useSearch()).get('next');
  return () => navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/documents');
}

/**
 * Managed deployment: email and password, then the TOTP step when the account has one. `onStep` says
 * when the code is being asked for (the page then shows that step alone); `onDone` follows a sign-in.
 */
export function AccountSignIn({ onStep, onDone }: { onStep?: (askingCode: boolean) => void; onDone: () => void }) {
  const { signInWithTokens } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [recovery, setRecovery] = useState(false);
  const [ticket, setTicketState] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const codeField = useRef<HTMLInputElement>(null);

  const setTicket = (value: string | null) => {
    setTicketState(value);
    onStep?.(value !== null);
  };

  // The code step: its field takes the focus, so the code can be typed at once.
  useEffect(() => {
    if (ticket) codeField.current?.focus();
  }, [ticket, recovery]);

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(
        e instanceof ApiProblem && e.status === 401
          ? ticket
            ? recovery
              ? 'That recovery code was not accepted. Each code works once; check it and try another.'
              : 'That code was not accepted. Enter the current code from your app.'
            : 'The email address or password is not right.'
          : (e as Error).message,
      );
    } finally {
      setBusy(false);
    }
  };

  const login = (event: FormEvent) => {
    event.preventDefault();
    if (!email.trim() || !password) return setError('Enter your email address and password.');
    void run(async () => {
      const answer = await unwrap(api.POST('/v1/auth/login', { body: { email: email.trim(), password } }));
      if (answer && 'totp_required' in answer) {
        setCode('');
        setRecovery(false);
        setTicket(answer.session_token);
        return;
      }
      if (answer) {
        await signInWithTokens(answer);
        onDone();
      }
    });
  };

  const confirm = (event: FormEvent) => {
    event.preventDefault();
    if (!code.trim())
      return setError(recovery ? 'Enter one of your recovery codes.' : 'Enter the code from your authenticator app.');
    void run(async () => {
      const tokens = await unwrap(
        api.POST('/v1/auth/totp/validate', { body: { session_token: ticket!, code: code.trim() } }),
      );
      if (tokens) {
        await signInWithTokens(tokens);
        onDone();
      }
    });
  };

  /** Back to the address and password: the pending sign-in is dropped, its ticket with it. */
  const back = () => {
    setTicket(null);
    setCode('');
    setRecovery(false);
    setPassword('');
    setError(null);
  };

  if (ticket) {
    return (
      <form className="panel-box" onSubmit={confirm} noValidate aria-labelledby="totp-heading">
        <h2 id="totp-heading">Two-step sign-in</h2>
        <p>
          Signing in as <strong>{email.trim()}</strong>.
        </p>
        <div className="field">
          <label htmlFor="totp-code">{recovery ? 'Recovery code' : 'Code from your authenticator app'}</label>
          <p className="hint" id="totp-hint">
            {recovery
              ? 'One of the recovery codes you stored when you turned two-step sign-in on. Each works once.'
              : 'The six digits your app shows now.'}
          </p>
          <input
            ref={codeField}
            id="totp-code"
            inputMode={recovery ? 'text' : 'numeric'}
            autoComplete={recovery ? 'off' : 'one-time-code'}
            spellCheck={false}
            value={code}
            onChange={(e) => setCode(e.target.value)}
            aria-describedby={error ? 'totp-hint sign-in-error' : 'totp-hint'}
            aria-invalid={error ? true : undefined}
          />
          <FieldError id="sign-in-error" text={error} />
        </div>
        <div className="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Checking…' : 'Confirm'}
          </button>
          <button
            type="button"
            className="link-button"
            onClick={() => {
              setRecovery(!recovery);
              setCode('');
              setError(null);
            }}
          >
            {recovery ? 'Use a code from your app' : 'Use a recovery code'}
          </button>
          <button type="button" className="secondary" onClick={back}>
            Back
          </button>
        </div>
      </form>
    );
  }
  return (
    <form className="panel-box" onSubmit={login} noValidate aria-labelledby="account-heading">
      <h2 id="account-heading">With your account</h2>
      <div className="field">
        <label htmlFor="email">Email address</label>
        <input
          id="email"
          type="email"
          autoComplete="username"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
      </div>
      <div className="field">
        <label htmlFor="password">Password</label>
        <input
          id="password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          aria-describedby={error ? 'sign-in-error' : undefined}
          aria-invalid={error ? true : undefined}
        />
        <FieldError id="sign-in-error" text={error} />
      </div>
      <button type="submit" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
      <p>
        <Link href="/forgot-password">Forgot your password?</Link>
      </p>
    </form>
  );
}

/** Single sign-on: the organisation's identity provider, found by the organisation's short name. */
function SsoSignIn() {
  const [slug, setSlug] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const start = async (event: FormEvent) => {
    event.preventDefault();
    const value = slug.trim().toLowerCase();
    if (!/^[a-z0-9][a-z0-9-]*$/.test(value)) return setError('Enter your organisation’s short name, as in acme.');
    setBusy(true);
    setError(null);
    // Asked first, so a mistyped name is told here rather than on an error page.
    const probe = await api
      .GET('/saml/{tenantSlug}/metadata', { params: { path: { tenantSlug: value } }, parseAs: 'text' })
      .catch(() => null);
    setBusy(false);
    if (!probe?.response.ok) {
      return setError(
        probe?.response.status === 404
          ? 'No organisation with single sign-on has this short name. Check it, or sign in with your password.'
          : 'The service could not be reached. Check your connection and try again.',
      );
    }
    // A full page load: the identity provider's sign-in happens on its own site and comes back to the
    // portal's landing, which takes the tokens only for the sign-in this tab started.
    startSso(value);
  };
  return (
    <form className="panel-box" onSubmit={(e) => void start(e)} noValidate aria-labelledby="sso-heading">
      <h2 id="sso-heading">With single sign-on</h2>
      <div className="field">
        <label htmlFor="org-slug">Organisation short name</label>
        <input
          id="org-slug"
          value={slug}
          autoComplete="organization"
          onChange={(e) => setSlug(e.target.value)}
          aria-describedby={error ? 'sso-error' : undefined}
          aria-invalid={error ? true : undefined}
        />
        <FieldError id="sso-error" text={error} />
      </div>
      <button type="submit" className="secondary" disabled={busy}>
        Continue to your identity provider
      </button>
    </form>
  );
}

/** An API key, checked against GET /tenant before it is kept (both deployments). */
export function ApiKeySignIn({ onDone }: { onDone: () => void }) {
  const { signInWithKey } = useSession();
  const [key, setKey] = useState('');
  const [keep, setKeep] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

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
      signInWithKey(apiKey, keep);
      onDone();
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
    <form className="panel-box" onSubmit={submit} noValidate aria-labelledby="key-heading">
      <h2 id="key-heading">With an API key</h2>
      <div className="field">
        <label htmlFor="api-key">API key</label>
        <p className="hint" id="api-key-hint">
          It starts with <code>sdf_k</code> and is shown once when it is created.
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
        <FieldError id="api-key-error" text={error} />
      </div>
      <div className="field checkbox">
        <label>
          <input type="checkbox" checked={keep} onChange={(e) => setKeep(e.target.checked)} /> Keep me signed in while
          this tab is open
        </label>
        <p className="hint">The key is never stored in a cookie or kept after you close the tab.</p>
      </div>
      <button type="submit" disabled={busy} className="secondary">
        {busy ? 'Checking…' : 'Sign in with the key'}
      </button>
    </form>
  );
}

export function SignInPage() {
  const mode = useDeploymentMode();
  const done = useNext();
  // While the second factor is asked for, that step is the page: no other way in competes with it.
  const [askingCode, setAskingCode] = useState(false);
  const ended = new URLSearchParams(useSearch()).get('ended') === 'everywhere';
  return (
    <section className="narrow">
      <h1 tabIndex={-1}>Sign in</h1>
      {ended && (
        <p className="notice ok" role="status">
          You are signed out on every device.
        </p>
      )}
      {!askingCode && <p className="lead">Sign in to upload, sign and manage your organisation&apos;s documents.</p>}
      {mode === 'managed' && (
        <>
          <AccountSignIn onStep={setAskingCode} onDone={done} />
          {!askingCode && (
            <>
              <SsoSignIn />
              <p>
                New here? <Link href="/sign-up">Create an organisation</Link>
              </p>
            </>
          )}
        </>
      )}
      {mode !== undefined && !askingCode && <ApiKeySignIn onDone={done} />}
    </section>
  );
}

/** Pages that need a caller: without one, a way to sign in that comes back here. */
export function RequireSignIn({ children }: { children: ReactNode }) {
  const { signedIn, restoring } = useSession();
  const [location] = useLocation();
  const search = useSearch();
  if (signedIn) return <>{children}</>;
  if (restoring) return <p role="status">Checking your session…</p>;
  return (
    <section className="narrow">
      <h1 tabIndex={-1}>Sign in to continue</h1>
      <p>
        This page shows your organisation&apos;s documents.{' '}
        <Link href={`/sign-in?next=${encodeURIComponent(search ? `${location}?${search}` : location)}`}>Sign in</Link>,
        or <Link href="/read">read a file</Link> without an account.
      </p>
    </section>
  );
}

/**
 * The session ended while a page was open (elsewhere, or it ran out): a sign-in in place, above the page,
 * which stays as it was with what was typed into it; what was refused is sent again once signed in.
 */
export function SignInAgain() {
  const { lapsed, endLapse, credential } = useSession();
  const mode = useDeploymentMode();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (lapsed) heading.current?.focus();
  }, [lapsed]);
  if (!lapsed) return null;
  return (
    <section className="panel-box sign-in-again" aria-labelledby="sign-in-again-heading" data-testid="sign-in-again">
      <h2 id="sign-in-again-heading" tabIndex={-1} ref={heading}>
        Your session has ended
      </h2>
      <p role="alert">
        Sign in again to go on. What you entered on this page is kept, and what you were doing is done once you are
        signed in.
      </p>
      {credential?.kind === 'account' && mode === 'managed' ? (
        <AccountSignIn onDone={() => endLapse(true)} />
      ) : (
        <ApiKeySignIn onDone={() => endLapse(true)} />
      )}
      <button type="button" className="link-button" onClick={() => endLapse(false)}>
        Sign out instead
      </button>
    </section>
  );
}
