import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { ApiProblem, api, unwrap, type Schemas } from '../api/client.js';
import { Link, useLocation } from 'wouter';
import { ProblemNotice } from '../documents/status.js';
import { download } from '../download.js';
import { formatDateTime } from '../format.js';
import { useSession } from '../session.js';
import { useProfile } from './team-page.js';
import { FieldError } from '../field-error.js';

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
      <FieldError id="totp-error" text={error} />
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

/** The account's sessions, one per sign-in on a device: end one, or all of them. */
function Sessions() {
  const queryClient = useQueryClient();
  const { signOut } = useSession();
  const [, navigate] = useLocation();
  const list = useQuery({ queryKey: ['sessions'], queryFn: () => unwrap(api.GET('/v1/auth/sessions')) });
  const end = useMutation({
    mutationFn: (id: string) =>
      unwrap(api.DELETE('/v1/auth/sessions/{sessionId}', { params: { path: { sessionId: id } } })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['sessions'] }),
  });
  const everywhere = useMutation({
    mutationFn: () => signOut({ everywhere: true }),
    onSuccess: () => navigate('/sign-in?ended=everywhere'),
  });
  const sessions = list.data?.data ?? [];
  return (
    <>
      <p className="hint">Each sign-in on a browser or device is a session. End one you do not recognise.</p>
      <ProblemNotice error={list.error ?? end.error ?? everywhere.error} />
      <ul className="files" data-testid="sessions">
        {sessions.map((s) => (
          <li key={s.id} data-testid="session-row" data-current={s.current || undefined} className="session-row">
            <span>
              <strong>{s.device}</strong>
              {s.current && <span className="badge badge-valid session-badge">This session</span>}
            </span>
            {/* What tells two sessions of one browser apart: where from, when begun, when last used. No place
                is named: the service keeps no location, and guessing one would send the address elsewhere. */}
            <dl className="session-facts">
              <div>
                <dt>Address</dt>
                <dd>{s.ip_address ?? 'not known'}</dd>
              </div>
              <div>
                <dt>Signed in</dt>
                <dd>{formatDateTime(s.first_used_at)}</dd>
              </div>
              <div>
                <dt>Last used</dt>
                <dd>{formatDateTime(s.last_used_at)}</dd>
              </div>
            </dl>
            {!s.current && (
              <button type="button" className="secondary" onClick={() => end.mutate(s.id)} disabled={end.isPending}>
                End
                <span className="visually-hidden">
                  {' '}
                  the session on {s.device} from {s.ip_address ?? 'an unknown address'}
                </span>
              </button>
            )}
          </li>
        ))}
      </ul>
      <button
        type="button"
        className="danger"
        disabled={everywhere.isPending}
        onClick={() => {
          if (window.confirm('Sign out on every device, this one included?')) everywhere.mutate();
        }}
      >
        Log out everywhere
      </button>
    </>
  );
}

/** The account's sign-in security: two-step sign-in (TOTP) and the sessions on each device. */
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
      <div className="panel-box" aria-labelledby="sessions-heading" role="region">
        <h2 id="sessions-heading">Where you are signed in</h2>
        <Sessions />
      </div>
      <p>
        Your name and password are on your <Link href="/profile">profile</Link>.
      </p>
    </section>
  );
}
