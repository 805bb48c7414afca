import { SdfError } from './errors.js';
import { failResult, type ValidationResult } from './result.js';
import { applyTrust, type IntegrityOutcome, type KeyLookup, type VerifyResult } from './signature/verify.js';
import { SIGNATURE_ENTRY } from './zip/names.js';

/**
 * What the checks concluded before the caller's keys are applied: the result, and for a signed file
 * whose signature is intact, what it was signed with. The pool's processes send this back; the trust
 * step runs where the key lookup is (it may be a database or a JWKS URL).
 */
export interface CoreOutcome {
  result: ValidationResult;
  integrity?: IntegrityOutcome;
}

export function signatureError(verify: VerifyResult): SdfError {
  const message = `signature.sig does not verify: ${verify.reason ?? 'unknown reason'}`;
  return new SdfError('SDF_ERROR_INVALID_SIGNATURE', message, SIGNATURE_ENTRY, [{ path: '', message }]);
}

/**
 * Applies the caller's key lookup (F9 trust) to a core outcome; shared by validate() and the pool. It
 * lives apart from the checks so that the pool's side, which only sends files and reads answers, does
 * not load the PDF inspector and the schema compiler that its processes run.
 */
export async function finishValidation(outcome: CoreOutcome, keyLookup?: KeyLookup): Promise<ValidationResult> {
  const { result, integrity } = outcome;
  if (!integrity || !result.valid) return result;
  const verified = await applyTrust(integrity, keyLookup);
  result.signature = verified;
  if (!verified.valid) {
    result.checks.signature = 'fail';
    return failResult(result, 'signature', signatureError(verified));
  }
  if (!verified.trusted) {
    result.warnings.push(`signature.sig verifies with its embedded key ${verified.key_id}, which is not a trusted key`);
  }
  return result;
}
