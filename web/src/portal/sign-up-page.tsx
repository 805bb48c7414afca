import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { ApiProblem, api, unwrap } from '../api/client.js';
import { MIN_PASSWORD_LENGTH, NewPasswordField } from './password-field.js';
import { FieldError } from '../field-error.js';

/** acme-gmbh from "Acme GmbH": the short name's rule (lower case letters, digits, inner hyphens). */
function slugOf(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
}

type Field = 'organization' | 'slug' | 'email' | 'password';

/**
 * Managed deployment: a new organisation and its owner; the address is confirmed by mail. The answer is the
 * same when the address already has an account (its owner gets a mail instead), so the page says the same.
 */
export function SignUpPage() {
  const [organization, setOrganization] = useState('');
  const [slug, setSlug] = useState('');
  const [slugEdited, setSlugEdited] = useState(false);
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<{ field: Field | null; text: string } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const shownSlug = slugEdited ? slug : slugOf(organization);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!organization.trim()) return setError({ field: 'organization', text: 'Enter your organisation’s name.' });
    if (!shownSlug) return setError({ field: 'slug', text: 'Choose a short name: letters, digits and hyphens.' });
    if (!email.trim()) return setError({ field: 'email', text: 'Enter your email address.' });
    if (password.length < MIN_PASSWORD_LENGTH) {
      return setError({ field: 'password', text: `Use at least ${MIN_PASSWORD_LENGTH} characters.` });
    }
    setBusy(true);
    setError(null);
    try {
      await unwrap(
        api.POST('/v1/auth/register', {
          body: {
            organization: organization.trim(),
            slug: shownSlug,
            name: name.trim() || undefined,
            email: email.trim(),
            password,
          },
        }),
      );
      setDone(email.trim());
    } catch (e) {
      const field = e instanceof ApiProblem ? e.field : null;
      const known: Field[] = ['organization', 'slug', 'email', 'password'];
      setError({ field: known.includes(field as Field) ? (field as Field) : null, text: (e as Error).message });
    } finally {
      setBusy(false);
    }
  };

  const fieldError = (field: Field) => (
    <FieldError id={`${field}-error`} text={error?.field === field ? error.text : null} />
  );
  const described = (field: Field, hint?: string) =>
    [hint, error?.field === field ? `${field}-error` : undefined].filter(Boolean).join(' ') || undefined;

  if (done) {
    return (
      <section className="narrow">
        <h1 tabIndex={-1}>Check your mail</h1>
        <p className="notice ok" role="status" data-testid="signed-up">
          We sent a mail to {done}. Open the link in it to confirm your address, then{' '}
          <Link href="/sign-in">sign in</Link>. If the address already has an account, the mail says so and how to sign
          in.
        </p>
      </section>
    );
  }
  return (
    <section className="narrow">
      <h1 tabIndex={-1}>Create an organisation</h1>
      <p className="lead">An account for your organisation, with you as its owner.</p>
      <form className="panel-box" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor="organization">Organisation name</label>
          <input
            id="organization"
            autoComplete="organization"
            value={organization}
            onChange={(e) => setOrganization(e.target.value)}
            aria-invalid={error?.field === 'organization' || undefined}
            aria-describedby={described('organization')}
          />
          {fieldError('organization')}
        </div>
        <div className="field">
          <label htmlFor="slug">Short name</label>
          <p className="hint" id="slug-hint">
            Used in addresses, such as single sign-on and your published signing keys.
          </p>
          <input
            id="slug"
            value={shownSlug}
            onChange={(e) => {
              setSlugEdited(true);
              setSlug(e.target.value);
            }}
            aria-invalid={error?.field === 'slug' || undefined}
            aria-describedby={described('slug', 'slug-hint')}
          />
          {fieldError('slug')}
        </div>
        <div className="field">
          <label htmlFor="signup-name">Your name</label>
          <input
            id="signup-name"
            autoComplete="name"
            maxLength={200}
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="signup-email">Your email address</label>
          <input
            id="signup-email"
            type="email"
            autoComplete="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            aria-invalid={error?.field === 'email' || undefined}
            aria-describedby={described('email')}
          />
          {fieldError('email')}
        </div>
        <NewPasswordField
          value={password}
          onChange={setPassword}
          error={error?.field === 'password' ? error.text : null}
        />
        {error && error.field === null && (
          <p className="notice error" role="alert">
            {error.text}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create the organisation'}
        </button>
      </form>
      <p>
        Already have an account? <Link href="/sign-in">Sign in</Link>
      </p>
    </section>
  );
}
