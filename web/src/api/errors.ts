import type { components } from './schema.js';

type ErrorPayload = components['schemas']['ErrorPayloadDto'];

/** What each SDF_ERROR_* code means for the person holding the file (SDF_FORMAT 12). */
export const SDF_ERROR_SENTENCES: Record<string, string> = {
  SDF_ERROR_NOT_ZIP: 'This is not an SDF file: it is not a ZIP archive.',
  SDF_ERROR_INVALID_ARCHIVE: 'The archive is damaged or built in a way SDF does not allow.',
  SDF_ERROR_ARCHIVE_TOO_LARGE: 'The archive, or what it unpacks to, is larger than SDF files may be.',
  SDF_ERROR_MISSING_FILE: 'A part every SDF file must have is missing.',
  SDF_ERROR_INVALID_META: 'The identity part (meta.json) is missing, unreadable or incomplete.',
  SDF_ERROR_UNSUPPORTED_VERSION: 'The file uses an SDF version this service does not read.',
  SDF_ERROR_INVALID_SCHEMA: 'The schema that describes the data (schema.json) is not usable.',
  SDF_ERROR_INVALID_DATA: 'The business data (data.json) breaks a rule of the format.',
  SDF_ERROR_SCHEMA_MISMATCH: 'The business data does not match the schema it declares.',
  SDF_ERROR_UNSAFE_PDF: 'The visual layer (visual.pdf) contains something a safe document may not.',
  SDF_ERROR_INVALID_SIGNATURE:
    'The signature does not match the document: it was changed after signing or never signed by that key.',
};

const SENTENCES: Record<string, string> = {
  UNAUTHORIZED: 'The service did not accept your credentials. Check the API key (copy all of it) or sign in again.',
  FORBIDDEN: 'Your credentials do not allow this.',
  EMAIL_NOT_VERIFIED: 'Confirm your email address first: open the link we mailed you.',
  NOT_FOUND: 'That item does not exist, or it belongs to another account.',
  CONFLICT: 'That conflicts with something that already exists.',
  INVALID_STATE: 'That cannot be done to this item in its current state.',
  PAYLOAD_TOO_LARGE: 'The file or request is larger than the service accepts.',
  REQUEST_TIMEOUT: 'The upload was too slow and the service stopped waiting. Try again on a steadier connection.',
  QUOTA_EXCEEDED: "Your plan's quota for this period is used up.",
  SERVICE_UNAVAILABLE: 'The service is briefly unavailable. Try again in a moment.',
  STORAGE_FULL: 'The service has run out of storage space. Try again later; if it lasts, tell your operator.',
  STORAGE_UNAVAILABLE: 'The service cannot store files right now. Try again later; if it lasts, tell your operator.',
  INTERNAL_ERROR: 'Something went wrong on the service. Try again; if it keeps happening, tell your operator.',
  VALIDATION_ERROR: 'Some of what you entered needs another look.',
};

/** `/url` -> `url`, `/events/0` -> `events`: the form field a JSON pointer concerns. */
export function fieldOf(pointer: string | undefined): string | null {
  if (!pointer) return null;
  const first = pointer.replace(/^\//, '').split('/')[0];
  return first ? first.replace(/~1/g, '/').replace(/~0/g, '~') : null;
}

/**
 * A refused request as a person reads it: what happened and what to do, with the field concerned and
 * the service's own detail (which names the exact rule) after it.
 */
export function describeProblem(
  status: number,
  payload: ErrorPayload | null,
  retryAfterSeconds: number | null,
): { sentence: string; field: string | null } {
  // A refusal that says when to come back (429, 503) says it in seconds; a quota's wait (to the end of the
  // billing period) is told by the quota's own sentence.
  const wait =
    (status === 429 || status === 503) && retryAfterSeconds && retryAfterSeconds <= 3600
      ? ` Try again in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}.`
      : '';
  if (!payload) {
    return {
      sentence:
        status === 503
          ? `The service is briefly unavailable.${wait || ' Try again in a moment.'}`
          : status >= 500
            ? 'The service is having trouble. Try again in a moment.'
            : status === 429
              ? `Too many requests in a short time.${wait}`
              : `The service refused the request (HTTP ${status}).`,
      field: null,
    };
  }
  if (payload.code === 'RATE_LIMITED') {
    return { sentence: `Too many requests in a short time.${wait}`, field: null };
  }
  if (status === 503 && payload.code !== 'BILLING_NOT_CONFIGURED') {
    const base = SENTENCES[payload.code] ?? 'The service is briefly unavailable.';
    return { sentence: wait ? base.replace(/ Try again in a moment\.$/, '') + wait : base, field: null };
  }
  const detail = payload.details[0];
  const field = fieldOf(detail?.path) ?? payload.file ?? null;
  const base = SDF_ERROR_SENTENCES[payload.code] ?? SENTENCES[payload.code];
  const specific = detail && field ? `${field}: ${detail.message}` : payload.message;
  return {
    sentence: base ? `${base} ${capitalise(specific)}.`.replace(/\.\.$/, '.') : capitalise(payload.message),
    field,
  };
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
