import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { api, unwrap } from '../api/client.js';
import { FieldError } from '../field-error.js';

/** Forgot password: the address gets a link if it has an account; the page says the same either way. */
export function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!email.trim()) return setError('Enter the email address you sign in with.');
    setBusy(true);
    setError(null);
    try {
      await unwrap(api.POST('/v1/auth/password/forgot', { body: { email: email.trim() } }));
      setSent(true);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="narrow">
      <h1 tabIndex={-1}>Forgot your password?</h1>
      {sent ? (
        <p className="notice ok" role="status" data-testid="reset-sent">
          If an account uses {email.trim()}, we have sent it a link to choose a new password. The link works once, for
          30 minutes. Check your spam folder if it does not arrive.
        </p>
      ) : (
        <form className="panel-box" onSubmit={submit} noValidate>
          <p>We will mail you a link to choose a new password.</p>
          <div className="field">
            <label htmlFor="reset-email">Email address</label>
            <input
              id="reset-email"
              type="email"
              autoComplete="username"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              aria-describedby={error ? 'reset-email-error' : undefined}
              aria-invalid={error ? true : undefined}
            />
            <FieldError id="reset-email-error" text={error} />
          </div>
          <button type="submit" disabled={busy}>
            {busy ? 'Sending…' : 'Send the link'}
          </button>
        </form>
      )}
      <p>
        <Link href="/sign-in">Back to sign-in</Link>
      </p>
    </section>
  );
}
