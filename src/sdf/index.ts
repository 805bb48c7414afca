import type { PackInput, PackResult } from './producer/pack.js';

export { SDF_ERROR_CODES, SdfError, isSdfError, type SdfErrorCode, type SdfErrorDetail } from './errors.js';
export { DEFAULT_LIMITS, type Limits } from './limits.js';
export { readMeta } from './read-meta.js';
export { normalizeMeta, UUID_V4, type NormalizedMeta } from './rules/meta.js';
export { RESERVED_DATA_KEYS, isIso4217 } from './rules/data.js';
export { SUPPORTED_SDF_VERSION } from './rules/version.js';
export { compileSchema, type CompiledSchema } from './schema/compile.js';
export { canonicalJson, sha256Hex } from './schema/canonical.js';
export {
  validate,
  CHECK_NAMES,
  type CheckName,
  type CheckStatus,
  type ValidateOptions,
  type ValidationError,
  type ValidationResult,
} from './validate.js';
export {
  createValidationPool,
  DataBudgetError,
  ProduceBudgetError,
  WorkerTaskError,
  defaultPoolWorkers,
  type PoolDataOptions,
  type PoolDataResult,
  type PoolLane,
  type PoolProduceOptions,
  type PoolProduceResult,
  type PoolTaskOptions,
  type PoolValidateOptions,
  type PoolVerifyOptions,
  type PoolVerifyResult,
  type ValidationPool,
  type ValidationPoolOptions,
} from './pool/pool.js';
export { findUnsafeText, isUnsafeText, unsafeTextReason } from './rules/text.js';
export {
  generateKeyPair,
  publicKeyToJwk,
  jwkToPublicKey,
  jwkThumbprint,
  type GeneratedKeyPair,
  type PublicJwk,
  type PublicKeyInfo,
  type SignatureAlgorithm,
} from './signature/keys.js';
export { signArchive, type SignOptions } from './signature/sign.js';
export { createSignThreads, type SignThreads, type ThreadSignOptions } from './signature/sign-threads.js';
export { verifyArchive, type KeyLookup, type VerifyResult } from './signature/verify.js';
export type { PackInput, PackMetaInput, PackResult } from './producer/pack.js';

/**
 * The producer (rule 10), loaded on first call: its PDF writer and fonts are the heaviest part of the
 * format core, and the service runs it only in the pool's processes, so the API and worker processes
 * start without it. `pack` builds and validates an archive; `render` makes only its visual.pdf.
 */
export async function pack(input: PackInput): Promise<PackResult> {
  return (await import('./producer/pack.js')).pack(input);
}

export async function render(data: Record<string, unknown>): Promise<Buffer> {
  return (await import('./producer/render.js')).render(data);
}
export { openArchive, readEntries, type Archive } from './zip/archive.js';
