import { useRef, useState, type FormEvent } from 'react';
import { ApiProblem, api, unwrap, type Schemas } from '../api/client.js';
import { takeLinkToken } from './token-link.js';

/** What the service asks of a password (the register and accept-invitation DTOs' length rule). */
const MIN_LENGTH = 10;

/** The page the invitation mail links to: the invitee chooses a password and joins the organisation. */
export function AcceptInvitationPage() {
  const token = useRef<string | null | undefined>(undefined);
  if (token.current === undefined) token.current = takeLinkToken();
  const [password, setPassword] = useState('');
  const [error, setError] = useState<{ field: string | null; text: string } | null>(null);
  const [joined, setJoined] = useState<Schemas['RegisteredDto'] | null>(null);
  const [gone, setGone] = useState(false);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (password.length < MIN_LENGTH) {
      setError({ field: 'password', text: `Use at least ${MIN_LENGTH} characters.` });
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const result = await unwrap(
        api.POST('/v1/auth/accept-invitation', { body: { token: token.current!, password } }),
      );
      if (result) setJoined(result);
    } catch (e) {
      if (e instanceof ApiProblem && (e.status === 410 || (e.status === 400 && e.field === 'token'))) setGone(true);
      else setError({ field: e instanceof ApiProblem ? e.field : null, text: (e as Error).message });
    } finally {
      setBusy(false);
    }
  };

  if (!token.current) {
    return (
      <section className="narrow">
        <h1 tabIndex={-1}>Join an organisation</h1>
        <p className="notice error" role="alert">
          This page needs the link from the invitation mail. Open the link in the mail, or copy all of it into the
          address bar.
        </p>
      </section>
    );
  }
  if (joined) {
    return (
      <section className="narrow">
        <h1 tabIndex={-1}>Welcome to {joined.organization.name}</h1>
        <p className="notice ok" role="status" data-testid="joined">
          You have joined {joined.organization.name} as {joined.user.role}. Sign in with {joined.user.email} and the
          password you chose.
        </p>
      </section>
    );
  }
  if (gone) {
    return (
      <section className="narrow">
        <h1 tabIndex={-1}>Join an organisation</h1>
        <p className="notice error" role="alert" data-testid="invitation-gone">
          This invitation is no longer valid: it was used, cancelled, replaced by a newer one, or it expired. Ask the
          person who invited you to send a new one.
        </p>
      </section>
    );
  }
  const rules = [{ met: password.length >= MIN_LENGTH, text: `At least ${MIN_LENGTH} characters` }];
  return (
    <section className="narrow">
      <h1 tabIndex={-1}>Join an organisation</h1>
      <p className="lead">You were invited to an organisation on this service. Choose a password to accept.</p>
      <form className="panel-box" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor="new-password">Password</label>
          <input
            id="new-password"
            type="password"
            autoComplete="new-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            aria-describedby={error?.field === 'password' ? 'password-rules password-error' : 'password-rules'}
            aria-invalid={error?.field === 'password' || undefined}
          />
          <ul className="rules" id="password-rules" aria-live="polite">
            {rules.map((rule) => (
              <li key={rule.text} className={rule.met ? 'rule-met' : undefined}>
                <span aria-hidden="true">{rule.met ? '✓' : '•'}</span> {rule.text}
                <span className="visually-hidden">{rule.met ? ' (met)' : ' (not yet)'}</span>
              </li>
            ))}
            <li>
              <span aria-hidden="true">•</span> Not a common or easily guessed password
            </li>
          </ul>
          {error?.field === 'password' && (
            <p className="field-error" id="password-error" role="alert">
              {error.text}
            </p>
          )}
        </div>
        {error && error.field !== 'password' && (
          <p className="notice error" role="alert">
            {error.text}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Joining…' : 'Accept the invitation'}
        </button>
      </form>
    </section>
  );
}
