import { SdfError, type SdfErrorCode } from './errors.js';
import {
  CHECK_NAMES,
  failResult,
  type CheckName,
  type CheckStatus,
  type ValidationError,
  type ValidationResult,
} from './result.js';
import { resolveLimits, type Limits } from './limits.js';
import { inspectPdf } from './pdf/inspect.js';
import type { StreamInflater } from './pdf/quick.js';
import { checkDataRules, parseData } from './rules/data.js';
import { checkJsonShape, needsShapeCheck } from './rules/json-shape.js';
import { parseMeta } from './rules/meta.js';
import { findUnsafeText, jsonMayHoldUnsafeText } from './rules/text.js';
import { checkVersion } from './rules/version.js';
import { compileSchemaSource } from './schema/compile.js';
import { finishValidation, signatureError, type CoreOutcome } from './finish.js';
import { checkIntegrity, type KeyLookup } from './signature/verify.js';
import { openArchive } from './zip/archive.js';
import type { RawInflater } from './zip/reader.js';
import { REQUIRED_ENTRIES, SIGNATURE_ENTRY } from './zip/names.js';
import {
  registeredMappingFor,
  summarize,
  summarizeDataBytes,
  type RegisteredSummaryMapping,
  type SummaryMapping,
} from './summary.js';

export { CHECK_NAMES, failResult, type CheckName, type CheckStatus, type ValidationError, type ValidationResult };
export { finishValidation, type CoreOutcome };

export interface ValidateOptions {
  keyLookup?: KeyLookup;
  limits?: Partial<Limits>;
  /** A tenant's mappings registered with its schemas (CoreOptions.summaryMappings). */
  summaryMappings?: RegisteredSummaryMapping[];
}

export interface CoreOptions {
  limits?: Partial<Limits>;
  /** Called as each check starts; the worker pool uses it to name the check a timeout interrupted. */
  onStage?: (stage: CheckName) => void;
  /** Receives the archive's entries once the container check passed (the browser reader shows them). */
  onEntries?: (files: ReadonlyMap<string, Buffer>, names: readonly string[]) => void;
  /**
   * Inflates the archive's Deflate entries in place of Node's zlib (the browser reader's native
   * inflater, which is asynchronous). Bound, declared size and CRC-32 are checked on its output as on
   * zlib's, so the verdict is the same.
   */
  inflateRaw?: RawInflater;
  /** Likewise for the PDF inspection's FlateDecode streams (zlib-wrapped); a failure is zlib's failure. */
  inflatePdfStream?: StreamInflater;
  /** A summary mapping of the caller's own (a tenant's), for the fields it names. */
  summaryMapping?: SummaryMapping;
  /**
   * A tenant's mappings registered with its schemas: the one whose schema id and content hash are the
   * document's (meta.json's schema_id, schema.json's canonical SHA-256) is used; `summaryMapping` wins.
   */
  summaryMappings?: RegisteredSummaryMapping[];
}

function emptyResult(): ValidationResult {
  const checks = Object.fromEntries(CHECK_NAMES.map((c) => [c, 'skipped'])) as Record<CheckName, CheckStatus>;
  return { valid: false, sdf_version: null, document_type: null, is_signed: false, checks, warnings: [] };
}

/**
 * Everything but trust: runs on untrusted bytes, so the pool runs it in a worker. The first failed
 * check ends the run (F10: the checks after it are `skipped`).
 */
export async function validateCore(input: Buffer | string, options: CoreOptions = {}): Promise<CoreOutcome> {
  const result = emptyResult();
  let stage: CheckName = 'container';
  // Set once meta.json is read: a failure after it still summarizes data.json if that parses.
  let summaryLater: (() => void) | undefined;
  // The caller's mapping, or the registered one once the schema's hash is known.
  let mapping = options.summaryMapping;
  const enter = (next: CheckName): void => {
    stage = next;
    options.onStage?.(next);
  };
  try {
    enter('container');
    const limits = resolveLimits(options.limits);
    const archive = await openArchive(input, limits, options.inflateRaw);
    const missing = REQUIRED_ENTRIES.filter((name) => name !== 'meta.json' && !archive.files.has(name));
    if (missing.length > 0) {
      // Rule 1; a missing meta.json is SDF_ERROR_INVALID_META (SDF_FORMAT 12.1), judged by the meta check.
      throw new SdfError(
        'SDF_ERROR_MISSING_FILE',
        `required entries missing: ${missing.join(', ')}`,
        missing[0],
        missing.map((name) => ({ path: `/${name}`, message: `${name} is required` })),
      );
    }
    result.is_signed = archive.files.has(SIGNATURE_ENTRY);
    result.checks.container = 'pass';
    options.onEntries?.(
      archive.files,
      archive.entries.map((e) => e.name),
    );

    enter('meta');
    const meta = parseMeta(archive.files.get('meta.json'), limits);
    result.meta = meta;
    result.sdf_version = meta.sdf_version;
    result.document_type = meta.document_type ?? null;
    result.warnings.push(...checkVersion(meta.sdf_version)); // F7
    result.checks.meta = 'pass';
    summaryLater = () => {
      result.summary = summarizeDataBytes(archive.files.get('data.json'), meta, limits, mapping);
    };

    enter('schema');
    const schemaBytes = archive.files.get('schema.json')!;
    checkJsonShape(schemaBytes, 'schema.json', limits, 'SDF_ERROR_INVALID_SCHEMA');
    const schema = compileSchemaSource(schemaBytes, (bytes) => {
      const parsed = parseSchema(bytes);
      refuseUnsafeText(parsed, 'schema.json', 'SDF_ERROR_INVALID_SCHEMA');
      return parsed;
    });
    result.schema_sha256 = schema.sha256;
    mapping ??= registeredMappingFor(options.summaryMappings, meta.schema_id, schema.sha256);
    result.checks.schema = 'pass';

    enter('data');
    const dataBytes = archive.files.get('data.json')!;
    if (needsShapeCheck(dataBytes, limits)) checkJsonShape(dataBytes, 'data.json', limits, 'SDF_ERROR_INVALID_DATA');
    const data = parseData(dataBytes);
    result.summary = summarize(data, meta, mapping);
    // F5 runs first: its codes are more precise than a schema mismatch. It also bounds the depth.
    checkDataRules(data, limits.maxJsonDepth);
    // JSON.parse lets NUL and lone surrogates in only through a \u escape: without one in the bytes (a
    // native search) the walk over the tree cannot find any, and is skipped.
    if (jsonMayHoldUnsafeText(dataBytes)) refuseUnsafeText(data, 'data.json', 'SDF_ERROR_INVALID_DATA');
    const problems = schema.check(data);
    if (problems.length > 0) {
      throw new SdfError(
        'SDF_ERROR_SCHEMA_MISMATCH',
        `data.json does not match schema.json: ${problems[0]!.path || '/'} ${problems[0]!.message}`,
        'data.json',
        problems,
      );
    }
    resolveDocumentType(result, data);
    result.checks.data = 'pass';

    enter('pdf');
    const pdf = archive.files.get('visual.pdf')!;
    result.warnings.push(...(await inspectPdf(pdf, { inflate: options.inflatePdfStream })));
    result.checks.pdf = 'pass';

    if (!result.is_signed) {
      result.valid = true;
      return { result };
    }
    enter('signature');
    const integrity = await checkIntegrity(
      archive.files,
      archive.entries.map((e) => e.name),
      meta,
    );
    result.signature = integrity.result;
    if (!integrity.result.valid) throw signatureError(integrity.result);
    result.checks.signature = 'pass';
    result.valid = true;
    return { result, integrity };
  } catch (error) {
    if (error instanceof SdfError) {
      if (result.summary === undefined) summaryLater?.();
      return { result: failResult(result, stage, error) };
    }
    throw error;
  }
}

function parseSchema(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    const message = `schema.json is not valid JSON: ${(error as Error).message}`;
    throw new SdfError('SDF_ERROR_INVALID_SCHEMA', message, 'schema.json', [{ path: '', message }]);
  }
}

/**
 * Text the service cannot store or serve (NUL, lone surrogates) is refused in the file's own terms:
 * the document type and validation messages reach the database, data.json reaches JSON output.
 * Called once the depth is bounded, and walks without recursion.
 */
function refuseUnsafeText(value: unknown, file: string, code: SdfErrorCode): void {
  const unsafe = findUnsafeText(value);
  if (!unsafe) return;
  const message = `${file}: the string at ${unsafe.path || '/'} ${unsafe.reason}`;
  throw new SdfError(code, message, file, [{ path: unsafe.path, message }]);
}

/** F4: document_type comes from meta.json, else from data.json; the service needs one. */
function resolveDocumentType(result: ValidationResult, data: unknown): void {
  if (result.document_type !== null) return;
  const fromData = (data as Record<string, unknown>).document_type;
  if (typeof fromData === 'string' && fromData !== '') {
    result.document_type = fromData;
    return;
  }
  const message = 'document_type is required in meta.json or data.json';
  throw new SdfError('SDF_ERROR_INVALID_META', message, 'meta.json', [{ path: '/document_type', message }]);
}

/**
 * F10: validates an archive in this thread, with no time or memory budget. F6 allows either a
 * linear-time regex engine or a time budget; this implementation chose the budget, which is the pool's
 * (createValidationPool): a schema with a catastrophic pattern stalls this function as long as the
 * pattern runs. The service and `sdf validate` therefore judge untrusted files through the pool; this
 * is for trusted input (a producer checking what it just built, tests, benchmarks).
 */
export async function validate(input: Buffer | string, options: ValidateOptions = {}): Promise<ValidationResult> {
  return finishValidation(
    await validateCore(input, { limits: options.limits, summaryMappings: options.summaryMappings }),
    options.keyLookup,
  );
}
