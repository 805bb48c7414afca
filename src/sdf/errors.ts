/**
 * F3: the nine codes of SDF_FORMAT.md 12.1 plus the two this service adds.
 */
export const SDF_ERROR_CODES = [
  'SDF_ERROR_NOT_ZIP',
  'SDF_ERROR_INVALID_META',
  'SDF_ERROR_MISSING_FILE',
  'SDF_ERROR_SCHEMA_MISMATCH',
  'SDF_ERROR_INVALID_SCHEMA',
  'SDF_ERROR_UNSUPPORTED_VERSION',
  'SDF_ERROR_INVALID_SIGNATURE',
  'SDF_ERROR_INVALID_ARCHIVE',
  'SDF_ERROR_ARCHIVE_TOO_LARGE',
  'SDF_ERROR_UNSAFE_PDF',
  'SDF_ERROR_INVALID_DATA',
] as const;

export type SdfErrorCode = (typeof SDF_ERROR_CODES)[number];

/** `path` is a JSON pointer into the entry named by the error's `file` (F3). */
export interface SdfErrorDetail {
  path: string;
  message: string;
}

export class SdfError extends Error {
  override readonly name = 'SdfError';
  /** F3: every failure carries at least one detail; without a more precise one, the message at the root. */
  readonly details: SdfErrorDetail[];

  constructor(
    readonly code: SdfErrorCode,
    message: string,
    readonly file?: string,
    details: SdfErrorDetail[] = [],
  ) {
    super(message);
    this.details = details.length > 0 ? details : [{ path: '', message }];
  }

  toJSON(): { code: SdfErrorCode; message: string; file?: string; details: SdfErrorDetail[] } {
    return { code: this.code, message: this.message, file: this.file, details: this.details };
  }
}

export function isSdfError(value: unknown): value is SdfError {
  return value instanceof SdfError;
}

/** RFC 6901 escaping of one reference token. */
export function pointerToken(token: string | number): string {
  return String(token).replace(/~/g, '~0').replace(/\//g, '~1');
}
