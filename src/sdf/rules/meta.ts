import { SdfError, type SdfErrorDetail } from '../errors.js';
import { DEFAULT_LIMITS, type Limits } from '../limits.js';
import { checkJsonShape } from './json-shape.js';
import { findUnsafeText } from './text.js';
import { isRfc3339DateTime } from './time.js';
import { SDF_VERSION_PATTERN } from './version.js';

/** F4: the service shape of meta.json. Fields not listed here are kept as they were. */
export interface NormalizedMeta {
  sdf_version: string;
  document_id: string;
  /** From meta.json; validation falls back to data.json's `document_type` (F4). */
  document_type?: string;
  schema_id?: string;
  issuer: { name: string; id?: string };
  issued_at: string;
  locale?: string;
  [other: string]: unknown;
}

/** F4: UUID version 4, variant RFC 4122, checked strictly. */
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

const OPTIONAL_STRINGS = ['document_type', 'schema_id', 'locale', 'issuer_id', 'recipient'] as const;

const invalidMeta = (message: string, path = ''): SdfError =>
  new SdfError('SDF_ERROR_INVALID_META', message, 'meta.json', [{ path, message }]);

/**
 * Parses meta.json bytes; any failure is SDF_ERROR_INVALID_META (SDF_FORMAT 12.1) naming the field.
 * Its size and nesting are bounded before JSON.parse, and every string is checked for text the
 * database and JSON output cannot carry, since the record keeps the whole normalized copy (F4).
 */
export function parseMeta(
  bytes: Buffer | undefined,
  limits: Pick<Limits, 'maxMetaBytes' | 'maxJsonDepth' | 'maxJsonValues'> = DEFAULT_LIMITS,
): NormalizedMeta {
  if (bytes === undefined) {
    throw new SdfError('SDF_ERROR_INVALID_META', 'meta.json is missing', 'meta.json', [
      { path: '', message: 'the archive has no meta.json' },
    ]);
  }
  if (bytes.length > limits.maxMetaBytes) throw metaTooLarge(limits.maxMetaBytes);
  checkJsonShape(bytes, 'meta.json', limits, 'SDF_ERROR_INVALID_META');
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw invalidMeta(`meta.json is not valid JSON: ${(error as Error).message}`);
  }
  const unsafe = findUnsafeText(raw);
  if (unsafe) throw invalidMeta(`meta.json: the string at ${unsafe.path || '/'} ${unsafe.reason}`, unsafe.path);
  return normalizeMeta(raw);
}

export function metaTooLarge(maxBytes: number): SdfError {
  return invalidMeta(`meta.json inflates to more than ${maxBytes} bytes, the limit for meta.json`);
}

export function normalizeMeta(raw: unknown): NormalizedMeta {
  const problems: SdfErrorDetail[] = [];
  const fail = (path: string, message: string): void => void problems.push({ path, message });
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new SdfError('SDF_ERROR_INVALID_META', 'meta.json must hold a JSON object', 'meta.json', [
      { path: '', message: 'root is not an object' },
    ]);
  }
  const m = raw as Record<string, unknown>;
  if (typeof m.sdf_version !== 'string' || !SDF_VERSION_PATTERN.test(m.sdf_version)) {
    fail('/sdf_version', 'sdf_version is required and must look like MAJOR.MINOR');
  }
  if (typeof m.document_id !== 'string' || !UUID_V4.test(m.document_id)) {
    fail('/document_id', 'document_id is required and must be a UUID version 4 (rule 7)');
  }
  const issuer = normalizeIssuer(m.issuer, m.issuer_id, fail);
  // F4: issued_at (service shape) or created_at (format shape); whichever is present must carry an offset.
  for (const field of ['issued_at', 'created_at'] as const) {
    if (m[field] !== undefined && (typeof m[field] !== 'string' || !isRfc3339DateTime(m[field]))) {
      fail(`/${field}`, `${field} must be an RFC 3339 date-time with a timezone offset (rule 9)`);
    }
  }
  if (m.issued_at === undefined && m.created_at === undefined)
    fail('/issued_at', 'issued_at or created_at is required');
  for (const field of OPTIONAL_STRINGS) {
    if (m[field] !== undefined && m[field] !== null && (typeof m[field] !== 'string' || m[field] === '')) {
      fail(`/${field}`, `${field} must be a non-empty string when present`);
    }
  }
  if (problems.length > 0 || issuer === undefined) {
    throw new SdfError(
      'SDF_ERROR_INVALID_META',
      `meta.json is invalid: ${problems[0]?.message}`,
      'meta.json',
      problems,
    );
  }
  // Known fields fold into the service shape; everything else is kept (F4: unknown fields are never rejected).
  const { issuer: _i, issuer_id: _id, created_at: _c, issued_at: _a, ...rest } = m;
  const out: NormalizedMeta = {
    ...rest,
    sdf_version: m.sdf_version as string,
    document_id: m.document_id as string,
    issuer,
    issued_at: (m.issued_at ?? m.created_at) as string,
  };
  for (const field of ['document_type', 'schema_id', 'locale'] as const) {
    if (typeof m[field] === 'string') out[field] = m[field];
    else delete out[field];
  }
  return out;
}

function normalizeIssuer(
  issuer: unknown,
  issuerId: unknown,
  fail: (path: string, message: string) => void,
): NormalizedMeta['issuer'] | undefined {
  if (typeof issuer === 'string' && issuer.trim() !== '') {
    return typeof issuerId === 'string' && issuerId !== '' ? { name: issuer, id: issuerId } : { name: issuer };
  }
  if (typeof issuer === 'object' && issuer !== null && !Array.isArray(issuer)) {
    const { name, id } = issuer as Record<string, unknown>;
    if (typeof name !== 'string' || name.trim() === '') {
      fail('/issuer/name', 'issuer.name must be a non-empty string');
      return undefined;
    }
    if (id !== undefined && typeof id !== 'string') {
      fail('/issuer/id', 'issuer.id must be a string');
      return undefined;
    }
    return id !== undefined ? { name, id } : { name };
  }
  fail('/issuer', 'issuer is required: a non-empty string or an object with a non-empty name');
  return undefined;
}
