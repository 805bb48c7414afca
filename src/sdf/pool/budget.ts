import { SdfError, type SdfErrorCode } from '../errors.js';
import { CHECK_NAMES, failResult, type CheckName, type ValidationResult } from '../result.js';

/**
 * What a check that ran out of time becomes: the entry it was judging is rejected. Running out of
 * memory is always SDF_ERROR_ARCHIVE_TOO_LARGE: the contents exceed what this service accepts (F2).
 */
const TIMEOUT_CODES: Record<CheckName, { code: SdfErrorCode; file?: string }> = {
  container: { code: 'SDF_ERROR_ARCHIVE_TOO_LARGE' },
  meta: { code: 'SDF_ERROR_INVALID_META', file: 'meta.json' },
  schema: { code: 'SDF_ERROR_INVALID_SCHEMA', file: 'schema.json' },
  // F6: a schema whose evaluation cannot finish within the budget (catastrophic regex) is a hostile schema.
  data: { code: 'SDF_ERROR_INVALID_SCHEMA', file: 'schema.json' },
  pdf: { code: 'SDF_ERROR_UNSAFE_PDF', file: 'visual.pdf' },
  signature: { code: 'SDF_ERROR_INVALID_SIGNATURE', file: 'signature.sig' },
};

/**
 * The result of a validation that a time or memory budget ended in `stage`: the checks before it
 * passed, the entry it was judging is rejected. Shared by the worker pool and the browser reader, so
 * both give a hostile file the same code.
 */
export function overBudget(
  stage: CheckName,
  exceeded: 'time' | 'memory',
  timeoutMs: number,
  memoryMb?: number,
): ValidationResult {
  const checks = Object.fromEntries(CHECK_NAMES.map((c) => [c, 'skipped'])) as ValidationResult['checks'];
  for (const check of CHECK_NAMES.slice(0, CHECK_NAMES.indexOf(stage))) checks[check] = 'pass';
  const { code, file } =
    exceeded === 'time'
      ? TIMEOUT_CODES[stage]
      : // The data check's memory is spent on data.json itself, whatever the schema.
        {
          code: 'SDF_ERROR_ARCHIVE_TOO_LARGE' as const,
          file: stage === 'data' ? 'data.json' : TIMEOUT_CODES[stage].file,
        };
  const reason =
    exceeded === 'time'
      ? `did not finish within the time budget of ${timeoutMs} ms`
      : memoryMb === undefined
        ? 'ran out of memory'
        : `exceeded the memory budget of ${memoryMb} MB`;
  const message = `the ${stage} check ${reason}`;
  const result: ValidationResult = {
    valid: false,
    sdf_version: null,
    document_type: null,
    is_signed: false,
    checks,
    warnings: [],
  };
  return failResult(result, stage, new SdfError(code, message, file, [{ path: '', message }]));
}
