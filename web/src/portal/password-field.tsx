import { FieldError } from '../field-error.js';

/** What the service asks of a new password (the sign-up rule): the length is shown as the user types. */
export const MIN_PASSWORD_LENGTH = 10;

export function NewPasswordField({
  value,
  onChange,
  error,
  label = 'Password',
}: {
  value: string;
  onChange: (value: string) => void;
  error: string | null;
  label?: string;
}) {
  const met = value.length >= MIN_PASSWORD_LENGTH;
  return (
    <div className="field">
      <label htmlFor="new-password">{label}</label>
      <input
        id="new-password"
        type="password"
        autoComplete="new-password"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-describedby={error ? 'password-rules password-error' : 'password-rules'}
        aria-invalid={error ? true : undefined}
      />
      <ul className="rules" id="password-rules" aria-live="polite">
        <li className={met ? 'rule-met' : undefined}>
          <span aria-hidden="true">{met ? '✓' : '•'}</span> At least {MIN_PASSWORD_LENGTH} characters
          <span className="visually-hidden">{met ? ' (met)' : ' (not yet)'}</span>
        </li>
        <li>
          <span aria-hidden="true">•</span> Not a common or easily guessed password
        </li>
      </ul>
      <FieldError id="password-error" text={error} />
    </div>
  );
}
