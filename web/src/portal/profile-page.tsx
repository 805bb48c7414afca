import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { ApiProblem, api, unwrap } from '../api/client.js';
import { formatDateTime } from '../format.js';
import { NewPasswordField } from './password-field.js';
import { roleLabel, useProfile } from './team-page.js';
import { FieldError } from '../field-error.js';

function NameForm() {
  const queryClient = useQueryClient();
  const profile = useProfile();
  const [name, setName] = useState('');
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    if (profile.data) setName(profile.data.name ?? '');
  }, [profile.data]);
  const save = useMutation({
    mutationFn: () => unwrap(api.PATCH('/v1/account/profile', { body: { name: name.trim() } })),
    onSuccess: () => {
      setSaved(true);
      void queryClient.invalidateQueries({ queryKey: ['profile'] });
      void queryClient.invalidateQueries({ queryKey: ['team'] });
    },
  });
  return (
    <form
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        setSaved(false);
        save.mutate();
      }}
      noValidate
    >
      <div className="field">
        <label htmlFor="profile-name">Your name</label>
        <input
          id="profile-name"
          autoComplete="name"
          maxLength={200}
          value={name}
          onChange={(e) => setName(e.target.value)}
          aria-describedby="profile-name-hint"
        />
        <p className="hint" id="profile-name-hint">
          Shown to your team beside your address. Leave it empty to show the address alone.
        </p>
      </div>
      {save.error && (
        <p className="notice error" role="alert">
          {save.error.message}
        </p>
      )}
      {saved && (
        <p className="notice ok" role="status">
          Saved.
        </p>
      )}
      <button type="submit" disabled={save.isPending || !profile.data}>
        Save name
      </button>
    </form>
  );
}

function PasswordChange() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [error, setError] = useState<{ field: string | null; text: string } | null>(null);
  const [changed, setChanged] = useState(false);
  const change = useMutation({
    mutationFn: () =>
      unwrap(api.PATCH('/v1/account/profile', { body: { current_password: current, new_password: next } })),
    onSuccess: () => {
      setChanged(true);
      setCurrent('');
      setNext('');
      setError(null);
    },
    onError: (e) =>
      setError({
        field: e instanceof ApiProblem ? (e.field === 'new_password' ? 'password' : e.field) : null,
        text: e.message,
      }),
  });
  return (
    <form
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        setChanged(false);
        change.mutate();
      }}
      noValidate
    >
      <div className="field">
        <label htmlFor="current-password">Current password</label>
        <input
          id="current-password"
          type="password"
          autoComplete="current-password"
          value={current}
          onChange={(e) => setCurrent(e.target.value)}
          aria-invalid={error?.field === 'current_password' || undefined}
          aria-describedby={error?.field === 'current_password' ? 'current-password-error' : undefined}
        />
        <FieldError id="current-password-error" text={error?.field === 'current_password' ? error.text : null} />
      </div>
      <NewPasswordField
        label="New password"
        value={next}
        onChange={setNext}
        error={error?.field === 'password' ? error.text : null}
      />
      {error && error.field !== 'password' && error.field !== 'current_password' && (
        <p className="notice error" role="alert">
          {error.text}
        </p>
      )}
      {changed && (
        <p className="notice ok" role="status" data-testid="password-changed">
          Your password is changed. Your other sessions were signed out.
        </p>
      )}
      <button type="submit" disabled={change.isPending}>
        Change password
      </button>
    </form>
  );
}

/** Who the signed-in person is: their name, address, role and password. */
export function ProfilePage() {
  const profile = useProfile();
  const me = profile.data;
  return (
    <section className="narrow">
      <h1 tabIndex={-1}>Profile</h1>
      {me && (
        <dl className="facts" data-testid="profile-facts">
          <dt>Email</dt>
          <dd className="wrap">{me.email}</dd>
          <dt>Role</dt>
          <dd>{roleLabel(me.role)}</dd>
          <dt>Member since</dt>
          <dd>{formatDateTime(me.created_at)}</dd>
        </dl>
      )}
      <div className="panel-box" aria-labelledby="name-heading" role="region">
        <h2 id="name-heading">Name</h2>
        <NameForm />
      </div>
      <div className="panel-box" aria-labelledby="password-heading" role="region">
        <h2 id="password-heading">Password</h2>
        <PasswordChange />
      </div>
    </section>
  );
}
