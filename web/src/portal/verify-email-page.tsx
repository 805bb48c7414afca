import { useEffect, useRef, useState } from 'react';
import { ApiProblem, api, unwrap } from '../api/client.js';
import { SignInOrDocuments } from './next-step.js';
import { takeLinkToken } from './token-link.js';

type State = 'working' | 'verified' | 'refused' | 'no-token' | 'failed';

/** The page the verification mail links to: posts the link's token once and says what happened. */
export function VerifyEmailPage() {
  const [state, setState] = useState<State>('working');
  const [detail, setDetail] = useState<string | null>(null);
  const started = useRef(false);
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const token = takeLinkToken();
    if (!token) {
      setState('no-token');
      return;
    }
    unwrap(api.POST('/v1/auth/verify-email', { body: { token } }))
      .then(() => setState('verified'))
      .catch((error: unknown) => {
        setState(error instanceof ApiProblem && error.status === 400 ? 'refused' : 'failed');
        setDetail((error as Error).message);
      });
  }, []);
  return (
    <section className="narrow">
      <h1 tabIndex={-1}>Confirm your email address</h1>
      <div role="status" aria-live="polite" data-testid="verify-state" data-state={state}>
        {state === 'working' && <p>Confirming your address…</p>}
        {state === 'verified' && (
          <p className="notice ok">
            Your email address is confirmed. You can sign in to your organisation&apos;s account with it and your
            password.
          </p>
        )}
        {state === 'refused' && (
          <p className="notice error">
            This link is no longer valid: it was already used, a newer one was sent, or it is more than 24 hours old.
            Sign in and ask for a new confirmation mail; if your address is already confirmed, there is nothing left to
            do.
          </p>
        )}
        {state === 'no-token' && (
          <p className="notice error">
            This page needs the link from the confirmation mail. Open the link in the mail, or copy all of it into the
            address bar.
          </p>
        )}
        {state === 'failed' && <p className="notice error">{detail}</p>}
      </div>
      {state === 'verified' && <SignInOrDocuments />}
    </section>
  );
}
