import type { ReactNode } from 'react';
import { SDF_ERROR_SENTENCES } from '../api/errors.js';
import type { ValidationResult } from '../../../src/sdf/result.js';

const CHECK_LABELS: Record<string, string> = {
  container: 'Archive',
  meta: 'Identity (meta.json)',
  schema: 'Schema (schema.json)',
  data: 'Data (data.json)',
  pdf: 'Visual layer (visual.pdf)',
  signature: 'Signature',
};

const STATUS_LABELS = { pass: 'Passed', fail: 'Failed', skipped: 'Not checked' } as const;

function originOf(url: string): string {
  try {
    return new URL(url, location.href).origin;
  } catch {
    return url;
  }
}

/** The warning finishValidation adds for an untrusted key: the verdict says it in its own words instead. */
const UNTRUSTED_WARNING = /^signature\.sig verifies with its embedded key .*, which is not a trusted key$/;

/**
 * The verdict: valid or not, every check with its status, and the error with its code and entry. For a
 * signed file, who signed is said once: trusted (named with the key list that vouches for it, since
 * whoever publishes that list decides), or not confirmed yet, with the key list box (`trust`) right here.
 */
export function Verdict({
  result,
  trustedBy = null,
  trust,
}: {
  result: ValidationResult;
  trustedBy?: string | null;
  trust?: ReactNode;
}) {
  const error = result.error;
  const signature = result.signature;
  const signer =
    result.valid && result.is_signed && signature?.valid ? (signature.trusted ? 'trusted' : 'unconfirmed') : null;
  const warnings = signer ? result.warnings.filter((w) => !UNTRUSTED_WARNING.test(w)) : result.warnings;
  const statusOf = (name: string, status: keyof typeof STATUS_LABELS): string =>
    name === 'signature' && signer === 'unconfirmed'
      ? 'Matches; key not confirmed'
      : name === 'signature' && signer === 'trusted'
        ? 'Passed; key trusted'
        : STATUS_LABELS[status];
  return (
    <section
      className={`verdict ${result.valid ? 'ok' : 'bad'}`}
      aria-labelledby="verdict-heading"
      data-testid="verdict"
      data-valid={String(result.valid)}
      data-signer={signer ?? undefined}
    >
      <h2 id="verdict-heading">
        <span className={`badge ${result.valid ? 'badge-valid' : 'badge-invalid'}`} data-testid="verdict-valid">
          {result.valid ? 'Valid' : 'Not valid'}
        </span>{' '}
        {result.valid
          ? result.is_signed
            ? 'A valid, signed SDF file'
            : 'A valid SDF file (not signed)'
          : 'This file does not pass the SDF checks'}
      </h2>
      {signer === 'trusted' && (
        <div className="notice ok signer" data-testid="signer">
          <p>
            <strong>Signed; the signer&apos;s key is trusted.</strong>{' '}
            {trustedBy ? (
              <span data-testid="trust-source">
                It is in the key list of <strong>{originOf(trustedBy)}</strong> (
                <code className="wrap">{trustedBy}</code>).
              </span>
            ) : (
              'It is in the key list you chose.'
            )}
          </p>
          {trust && (
            <details className="trust-details">
              <summary>Use another key list</summary>
              {trust}
            </details>
          )}
        </div>
      )}
      {signer === 'unconfirmed' && (
        <div
          className="notice warning signer"
          data-testid="signer"
          data-warning={result.warnings.find((w) => UNTRUSTED_WARNING.test(w))}
        >
          <p>
            <strong>Signed; the signer&apos;s key is not confirmed yet.</strong> The signature matches the key that came
            inside the file, so the file is unchanged since it was signed. Whether that key is the signer&apos;s is
            confirmed by the key list the signer publishes.
          </p>
          {trust}
        </div>
      )}
      {error && (
        <div className="verdict-error" role="alert">
          <p>{SDF_ERROR_SENTENCES[error.code] ?? error.message}</p>
          <dl className="fields compact">
            <div>
              <dt>Error code</dt>
              <dd>
                <code data-testid="error-code">{error.code}</code>
              </dd>
            </div>
            {error.file && (
              <div>
                <dt>Entry</dt>
                <dd>
                  <code data-testid="error-file">{error.file}</code>
                </dd>
              </div>
            )}
            <div>
              <dt>Detail</dt>
              <dd>{error.message}</dd>
            </div>
          </dl>
          {error.details.length > 1 && (
            <ul className="details">
              {error.details.slice(0, 20).map((detail, i) => (
                <li key={i}>
                  <code>{detail.path || '/'}</code> {detail.message}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      <ul className="checks" aria-label="Checks">
        {Object.entries(result.checks).map(([name, status]) => (
          <li key={name} className={`check check-${status}`} data-testid={`check-${name}`} data-status={status}>
            <span className="check-icon" aria-hidden="true">
              {status === 'pass' ? '✓' : status === 'fail' ? '✕' : '–'}
            </span>
            <span className="check-name">{CHECK_LABELS[name] ?? name}</span>
            <span className="check-status">{statusOf(name, status)}</span>
          </li>
        ))}
      </ul>
      {warnings.length > 0 && (
        <div className="notice warning" data-testid="warnings">
          <h3>Warnings</h3>
          <ul>
            {warnings.map((warning, i) => (
              <Warning key={i} text={warning} />
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}

/** A warning that begins with a code (`PDF_EMBEDDED_FILE: ...`) shows the code as one; the text stays whole. */
function Warning({ text }: { text: string }) {
  const coded = /^([A-Z][A-Z0-9_]+): /.exec(text);
  return (
    <li data-testid="warning" data-text={text}>
      {coded ? (
        <>
          <code>{coded[1]}</code> {text.slice(coded[0].length)}
        </>
      ) : (
        text
      )}
    </li>
  );
}
