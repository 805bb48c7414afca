import type { SdfError, SdfErrorCode, SdfErrorDetail } from './errors.js';
import type { NormalizedMeta } from './rules/meta.js';
import type { VerifyResult } from './signature/verify.js';
import type { DocumentSummary } from './summary.js';

/** F10: the checks of POST /validate, in the order they run. */
export const CHECK_NAMES = ['container', 'meta', 'schema', 'data', 'pdf', 'signature'] as const;
export type CheckName = (typeof CHECK_NAMES)[number];
export type CheckStatus = 'pass' | 'fail' | 'skipped';

export interface ValidationError {
  code: SdfErrorCode;
  message: string;
  file?: string;
  details: SdfErrorDetail[];
}

/** F10: the /validate result shape. */
export interface ValidationResult {
  valid: boolean;
  sdf_version: string | null;
  document_type: string | null;
  is_signed: boolean;
  checks: Record<CheckName, CheckStatus>;
  warnings: string[];
  meta?: NormalizedMeta;
  /** SHA-256 of the RFC 8785 form of schema.json, to compare with a schema registry (S14). */
  schema_sha256?: string;
  signature?: VerifyResult;
  error?: ValidationError;
  /**
   * What a person knows the document by (summary.ts), whenever meta.json and data.json could be read,
   * valid or not; null when data.json does not parse, absent when the run stopped before meta.json.
   */
  summary?: DocumentSummary | null;
}

/** Marks `stage` failed (later checks stay skipped) and records the error. */
export function failResult(
  result: ValidationResult,
  stage: CheckName,
  error: SdfError | ValidationError,
): ValidationResult {
  result.valid = false;
  result.checks[stage] = 'fail';
  result.error = { code: error.code, message: error.message, details: error.details };
  if (error.file !== undefined) result.error.file = error.file;
  return result;
}
