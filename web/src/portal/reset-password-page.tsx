import { useRef, useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { ApiProblem, api, unwrap } from '../api/client.js';
import { NextStep } from './next-step.js';
import { MIN_PASSWORD_LENGTH, NewPasswordField } from './password-field.js';
import { takeLinkToken } from './token-link.js';

/** The page the reset mail links to: a new password, which signs the user out everywhere. */
export function ResetPasswordPage() {
  const token = useRef<string | null | undefined>(undefined);
  if (token.current === undefined) token.current = takeLinkToken();
  const [password, setPassword] = useState('');
  const [state, setState] = useState<'form' | 'done' | 'spent'>('form');
  const [error, setError] = useState<{ field: string | null; text: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (password.length < MIN_PASSWORD_LENGTH) {
      setError({ field: 'password', text: `Use at least ${MIN_PASSWORD_LENGTH} characters.` });
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await unwrap(api.POST('/v1/auth/password/reset', { body: { token: token.current!, password } }));
      setState('done');
    } catch (e) {
      if (e instanceof ApiProblem && e.field === 'token') setState('spent');
      else setError({ field: e instanceof ApiProblem ? e.field : null, text: (e as Error).message });
    } finally {
      setBusy(false);
    }
  };

  let body;
  if (!token.current) {
    body = (
      <p className="notice error" role="alert">
        This page needs the link from the password mail. Open the link in the mail, or copy all of it into the address
        bar.
      </p>
    );
  } else if (state === 'done') {
    body = (
      <>
        <p className="notice ok" role="status" data-testid="reset-done">
          Your password is changed and you were signed out everywhere. Sign in with the new password.
        </p>
        <NextStep href="/sign-in">Sign in</NextStep>
      </>
    );
  } else if (state === 'spent') {
    body = (
      <p className="notice error" role="alert" data-testid="reset-spent">
        This link is no longer valid: it was used, a newer one was sent, or it is more than 30 minutes old.{' '}
        <Link href="/forgot-password">Ask for a new link</Link>.
      </p>
    );
  } else {
    body = (
      <form className="panel-box" onSubmit={submit} noValidate>
        <NewPasswordField
          value={password}
          onChange={setPassword}
          error={error?.field === 'password' ? error.text : null}
        />
        {error && error.field !== 'password' && (
          <p className="notice error" role="alert">
            {error.text}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Set the new password'}
        </button>
      </form>
    );
  }
  return (
    <section className="narrow">
      <h1 tabIndex={-1}>{state === 'done' ? 'Your password is changed' : 'Choose a new password'}</h1>
      {body}
    </section>
  );
}
