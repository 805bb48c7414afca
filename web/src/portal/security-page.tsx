import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { ApiProblem, api, unwrap, type Schemas } from '../api/client.js';
import { download } from '../download.js';
import { NewPasswordField } from './password-field.js';
import { useProfile } from './team-page.js';

/** The otpauth URI as a QR code, drawn in this page (the secret goes to no other service). */
function QrCode({ uri }: { uri: string }) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    let cancelled = false;
    void import('qrcode').then((qrcode) => {
      if (!cancelled && canvasRef.current) void qrcode.toCanvas(canvasRef.current, uri, { width: 200, margin: 2 });
    });
    return () => {
      cancelled = true;
    };
  }, [uri]);
  return <canvas ref={canvasRef} role="img" aria-label="QR code to scan with your authenticator app" />;
}

function TwoStep() {
  const queryClient = useQueryClient();
  const profile = useProfile();
  const [setup, setSetup] = useState<Schemas['TotpSetupDto'] | null>(null);
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<string[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const done = () => void queryClient.invalidateQueries({ queryKey: ['profile'] });
  const fail = (e: Error) =>
    setError(
      e instanceof ApiProblem && e.status === 401 ? 'That code was not accepted. Try the current one.' : e.message,
    );

  const start = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/auth/totp/setup')),
    onSuccess: (answer) => {
      setSetup(answer ?? null);
      setError(null);
    },
    onError: fail,
  });
  const enable = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/auth/totp/enable', { body: { code: code.trim() } })),
    onSuccess: (answer) => {
      setCodes(answer?.recovery_codes ?? []);
      setSetup(null);
      setCode('');
      setError(null);
      done();
    },
    onError: fail,
  });
  const disable = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/auth/totp/disable', { body: { code: code.trim() } })),
    onSuccess: () => {
      setCode('');
      setError(null);
      done();
    },
    onError: fail,
  });

  const codeField = (
    <div className="field">
      <label htmlFor="totp-code">Code</label>
      <input
        id="totp-code"
        autoComplete="one-time-code"
        value={code}
        onChange={(e) => setCode(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? 'totp-error' : undefined}
      />
      {error && (
        <p className="field-error" id="totp-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );

  if (codes) {
    return (
      <div className="notice warning" role="status" data-testid="recovery-codes">
        <h3>Two-step sign-in is on. Store these recovery codes now</h3>
        <p>Each works once instead of a code from your app, if you lose your phone. They are shown only this once.</p>
        <ul className="secret">
          {codes.map((c) => (
            <li key={c}>{c}</li>
          ))}
        </ul>
        <div className="actions">
          <button
            type="button"
            className="secondary"
            onClick={() => void navigator.clipboard?.writeText(codes.join('\n'))}
          >
            Copy
          </button>
          <button
            type="button"
            className="secondary"
            onClick={() =>
              download(new TextEncoder().encode(`${codes.join('\n')}\n`), 'sdf-recovery-codes.txt', 'text/plain')
            }
          >
            Download
          </button>
          <button type="button" className="link-button" onClick={() => setCodes(null)}>
            I have stored them
          </button>
        </div>
      </div>
    );
  }
  if (profile.data?.totp_enabled) {
    return (
      <form
        onSubmit={(event: FormEvent) => {
          event.preventDefault();
          disable.mutate();
        }}
        noValidate
      >
        <p data-testid="totp-state">Two-step sign-in is on.</p>
        <p className="hint">To turn it off, enter a code from your app or a recovery code.</p>
        {codeField}
        <button type="submit" className="danger" disabled={disable.isPending}>
          Turn off two-step sign-in
        </button>
      </form>
    );
  }
  if (setup) {
    return (
      <form
        onSubmit={(event: FormEvent) => {
          event.preventDefault();
          enable.mutate();
        }}
        noValidate
      >
        <p>Scan this code with an authenticator app, then enter the six-digit code it shows.</p>
        <QrCode uri={setup.otpauth_url} />
        <details>
          <summary>Cannot scan? Enter the key by hand</summary>
          <p>
            Key:{' '}
            <code className="wrap" data-testid="totp-secret">
              {setup.secret}
            </code>
          </p>
          <p className="wrap">
            <code>{setup.otpauth_url}</code>
          </p>
        </details>
        {codeField}
        <button type="submit" disabled={enable.isPending}>
          Turn on two-step sign-in
        </button>
      </form>
    );
  }
  return (
    <div>
      <p data-testid="totp-state">Two-step sign-in is off.</p>
      <p className="hint">With it on, signing in also asks for a code from an app on your phone.</p>
      <button type="button" onClick={() => start.mutate()} disabled={start.isPending || !profile.data}>
        Set up two-step sign-in
      </button>
      {error && (
        <p className="notice error" role="alert">
          {error}
        </p>
      )}
    </div>
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
        {error?.field === 'current_password' && (
          <p className="field-error" id="current-password-error" role="alert">
            {error.text}
          </p>
        )}
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

/** The account's sign-in security: two-step sign-in (TOTP) and the password. */
export function SecurityPage() {
  const profile = useProfile();
  return (
    <section className="narrow">
      <h1 tabIndex={-1}>Security</h1>
      {profile.data && <p className="lead">Signed in as {profile.data.email}.</p>}
      <div className="panel-box" aria-labelledby="two-step-heading" role="region">
        <h2 id="two-step-heading">Two-step sign-in</h2>
        <TwoStep />
      </div>
      <div className="panel-box" aria-labelledby="password-heading" role="region">
        <h2 id="password-heading">Password</h2>
        <PasswordChange />
      </div>
    </section>
  );
}
