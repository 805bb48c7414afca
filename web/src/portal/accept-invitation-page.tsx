import { useRef, useState, type FormEvent } from 'react';
import { ApiProblem, api, unwrap, type Schemas } from '../api/client.js';
import { SignInOrDocuments } from './next-step.js';
import { MIN_PASSWORD_LENGTH, NewPasswordField } from './password-field.js';
import { takeLinkToken } from './token-link.js';

/** The page the invitation mail links to: the invitee chooses a password and joins the organisation. */
export function AcceptInvitationPage() {
  const token = useRef<string | null | undefined>(undefined);
  if (token.current === undefined) token.current = takeLinkToken();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<{ field: string | null; text: string } | null>(null);
  const [joined, setJoined] = useState<Schemas['RegisteredDto'] | null>(null);
  const [gone, setGone] = useState(false);
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
      const result = await unwrap(
        api.POST('/v1/auth/accept-invitation', {
          body: { token: token.current!, password, name: name.trim() || undefined },
        }),
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
        <SignInOrDocuments />
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
  return (
    <section className="narrow">
      <h1 tabIndex={-1}>Join an organisation</h1>
      <p className="lead">You were invited to an organisation on this service. Choose a password to accept.</p>
      <form className="panel-box" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor="join-name">Your name</label>
          <input
            id="join-name"
            autoComplete="name"
            maxLength={200}
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        </div>
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
          {busy ? 'Joining…' : 'Accept the invitation'}
        </button>
      </form>
    </section>
  );
}
