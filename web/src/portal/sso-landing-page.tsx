import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, unwrap } from '../api/client.js';
import { useSession } from '../session.js';
import { currentLanding, spendLanding, startSso } from '../sso.js';
import { useProfile } from './team-page.js';

const SLUG = /^[a-z0-9][a-z0-9-]*$/;

function Restart({ org }: { org: string | null }) {
  if (!org || !SLUG.test(org)) return null;
  return (
    <p>
      <button type="button" onClick={() => startSso(org)}>
        Sign in with single sign-on from this browser
      </button>
    </p>
  );
}

/**
 * Where the identity provider sends the browser back. The tokens are used only when this tab started the
 * sign-in (sso.ts), and a session already open here is replaced only when the person says so.
 */
export function SsoLandingPage() {
  const { credential, restoring, signInWithTokens, switchTo } = useSession();
  const [, navigate] = useLocation();
  const [landing] = useState(currentLanding);
  const accepted = landing?.kind === 'accepted' ? landing : null;
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const acted = useRef(false);

  const current = useProfile(credential?.kind === 'account');
  // Who the new tokens belong to, asked with those tokens (the page's own credential is not involved).
  const incoming = useQuery({
    queryKey: ['sso-landing', accepted?.tokens.access_token],
    queryFn: () =>
      unwrap(api.GET('/v1/account/profile', { headers: { Authorization: `Bearer ${accepted!.tokens.access_token}` } })),
    enabled: accepted !== null && credential !== null,
    staleTime: Infinity,
    retry: false,
  });
  const sameAccount =
    credential?.kind === 'account' && current.data !== undefined && current.data.id === incoming.data?.id;

  const use = (work: () => Promise<void>, after: () => void) => {
    if (acted.current || !accepted) return;
    acted.current = true;
    spendLanding();
    setBusy(true);
    work()
      .then(after)
      .catch((e: unknown) => {
        setError((e as Error).message);
        setBusy(false);
      });
  };

  // Nobody signed in here, or the same person again: the sign-in this tab asked for is simply taken.
  useEffect(() => {
    if (!accepted || restoring || acted.current) return;
    if (credential === null)
      use(
        () => signInWithTokens(accepted.tokens),
        () => navigate('/', { replace: true }),
      );
    else if (sameAccount)
      use(
        () => switchTo(accepted.tokens),
        () => location.replace('/app/'),
      );
  });

  if (!landing || landing.kind === 'empty') {
    return (
      <section className="narrow">
        <h1 tabIndex={-1}>Single sign-on</h1>
        {error ? (
          <p className="notice error" role="alert">
            The sign-in could not be completed: {error}
          </p>
        ) : (
          <p>No sign-in came back from the identity provider.</p>
        )}
        <Restart org={landing?.org ?? null} />
        <p>
          <Link href="/sign-in">Other ways to sign in</Link>
        </p>
      </section>
    );
  }

  if (landing.kind === 'refused') {
    return (
      <section className="narrow">
        <h1 tabIndex={-1}>Single sign-on</h1>
        <p className="notice error" role="alert" data-testid="sso-refused">
          This sign-in was not started in this browser, so it was not used.
          {credential ? ' You are still signed in as before.' : ''}
        </p>
        <Restart org={landing.org} />
        <p>
          <Link href="/">Go to the start page</Link>
        </p>
      </section>
    );
  }

  if (restoring || credential === null || sameAccount || busy) {
    return (
      <section className="narrow">
        <h1 tabIndex={-1}>Single sign-on</h1>
        {error ? (
          <p className="notice error" role="alert">
            The sign-in could not be completed: {error}
          </p>
        ) : (
          <p role="status">Signing you in…</p>
        )}
      </section>
    );
  }

  const who =
    credential.kind === 'api-key'
      ? 'with an API key'
      : current.data
        ? `as ${current.data.name ? `${current.data.name} (${current.data.email})` : current.data.email}`
        : 'with your current account';
  const next = incoming.data
    ? incoming.data.name
      ? `${incoming.data.name} (${incoming.data.email})`
      : incoming.data.email
    : null;
  return (
    <section className="narrow">
      <h1 tabIndex={-1}>Switch accounts?</h1>
      {incoming.isError ? (
        <p className="notice error" role="alert">
          The sign-in that came back could not be used: {(incoming.error as Error).message}
        </p>
      ) : (
        <p data-testid="sso-switch-question">
          You are signed in {who}.{' '}
          {next ? (
            <>
              Switch to <strong>{next}</strong>?
            </>
          ) : (
            'Checking who signed in at the identity provider…'
          )}
        </p>
      )}
      {error && (
        <p className="notice error" role="alert">
          {error}
        </p>
      )}
      <div className="actions">
        {next && !incoming.isError && (
          <button
            type="button"
            onClick={() =>
              use(
                () => switchTo(accepted!.tokens),
                () => location.replace('/app/'),
              )
            }
          >
            Switch to {next}
          </button>
        )}
        <button
          type="button"
          className="secondary"
          onClick={() => {
            acted.current = true;
            spendLanding();
            navigate('/', { replace: true });
          }}
        >
          Stay signed in {who}
        </button>
      </div>
    </section>
  );
}
