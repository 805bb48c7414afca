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

/**
 * The verdict: valid or not, every check with its status, and the error with its code and entry. A
 * trusted signer is named with the key list that vouches for it, since whoever publishes that list decides.
 */
export function Verdict({ result, trustedBy = null }: { result: ValidationResult; trustedBy?: string | null }) {
  const error = result.error;
  return (
    <section
      className={`verdict ${result.valid ? 'ok' : 'bad'}`}
      aria-labelledby="verdict-heading"
      data-testid="verdict"
      data-valid={String(result.valid)}
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
      {result.signature?.trusted && trustedBy && (
        <p data-testid="trust-source">
          Signer trusted by the key list of <strong>{originOf(trustedBy)}</strong> (
          <code className="wrap">{trustedBy}</code>).
        </p>
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
            <span className="check-status">{STATUS_LABELS[status]}</span>
          </li>
        ))}
      </ul>
      {result.warnings.length > 0 && (
        <div className="notice warning" data-testid="warnings">
          <h3>Warnings</h3>
          <ul>
            {result.warnings.map((warning, i) => (
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
