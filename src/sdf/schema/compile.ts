import { createHash } from 'node:crypto';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { SdfError, pointerToken, type SdfErrorDetail } from '../errors.js';
import { canonicalJson, sha256Hex } from './canonical.js';
import { LruCache } from './lru.js';

// ajv-formats is CommonJS; under nodenext its default export arrives wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

const DRAFT_2020_12 = new Set([
  'https://json-schema.org/draft/2020-12/schema',
  'https://json-schema.org/draft/2020-12/schema#',
]);
const CACHE_SIZE = 256;

export interface CompiledSchema {
  /** SHA-256 of the RFC 8785 canonical form; equal schemas hash equal whatever their formatting. */
  readonly sha256: string;
  /** Returns the validation problems as JSON-pointer details into data.json; empty when valid. */
  check(data: unknown): SdfErrorDetail[];
}

const cache = new LruCache<string, CompiledSchema>(CACHE_SIZE);
/** The same validators by the SHA-256 of the exact bytes they were parsed from. */
const bySource = new LruCache<string, CompiledSchema>(CACHE_SIZE);

const invalidSchema = (message: string, path = ''): SdfError =>
  new SdfError('SDF_ERROR_INVALID_SCHEMA', message, 'schema.json', [{ path, message }]);

/**
 * F6: compiles a Draft 2020-12 schema with strict keywords and formats. Nothing is ever fetched:
 * no loader is configured, so a `$ref` that does not resolve inside the document fails to compile.
 * Compiled validators are kept in a bounded LRU keyed by the schema's content hash.
 */
export function compileSchema(schema: unknown): CompiledSchema {
  if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
    throw invalidSchema('schema.json must hold a JSON object');
  }
  const sha256 = sha256Hex(canonicalJson(schema));
  const hit = cache.get(sha256);
  if (hit) return hit;
  if (typeof schema === 'object') {
    const declared = (schema as Record<string, unknown>).$schema;
    if (declared !== undefined && (typeof declared !== 'string' || !DRAFT_2020_12.has(declared))) {
      throw invalidSchema(`$schema must be JSON Schema Draft 2020-12, not ${String(declared)}`, '/$schema');
    }
  }
  let validator: ValidateFunction;
  try {
    // One instance per schema: ajv registers schemas by $id, and two archives may reuse an $id with different content.
    const ajv = new Ajv2020({
      strict: true,
      strictTypes: false,
      strictTuples: false,
      strictRequired: false,
      allowUnionTypes: true,
      allErrors: true,
      validateFormats: true,
      logger: false,
    });
    addFormats(ajv);
    for (const keyword of extensionKeywords(schema)) ajv.addKeyword({ keyword });
    validator = ajv.compile(schema as object);
  } catch (error) {
    const message = error instanceof RangeError ? 'schema.json is nested too deeply' : (error as Error).message;
    throw invalidSchema(`schema.json does not compile: ${message}`);
  }
  const compiled: CompiledSchema = { sha256, check: (data) => runValidator(validator, data) };
  cache.set(sha256, compiled);
  return compiled;
}

/**
 * F6 from the bytes of schema.json: `parse` turns them into JSON (and reports when they are not).
 * Bytes seen before skip parsing and canonical hashing, which cost more than the check of a typical
 * data.json; what they compiled to is a pure function of the bytes.
 */
export function compileSchemaSource(bytes: Buffer, parse: (bytes: Buffer) => unknown): CompiledSchema {
  const key = createHash('sha256').update(bytes).digest('base64');
  const hit = bySource.get(key);
  if (hit) return hit;
  const compiled = compileSchema(parse(bytes));
  bySource.set(key, compiled);
  return compiled;
}

/**
 * F6 with JSON Schema 2020-12's rule that unknown keywords are annotations: real schemas carry `x-`
 * extensions (`x-display`, `x-erp-field`), so every key starting with `x-` is registered as an
 * annotation-only keyword before compiling. Any other unknown keyword stays an error (ajv strict mode),
 * which is how typos such as `propertiez` or `minLenght` are caught. Iterative: nesting is bounded by the
 * JSON shape pre-check, not by the stack. Property names that happen to start with `x-` are registered
 * too; that is harmless, a keyword is only looked for where a schema is.
 */
function extensionKeywords(schema: unknown): Set<string> {
  const found = new Set<string>();
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      stack.push(...(value as unknown[]));
      continue;
    }
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      if (key.startsWith('x-') && EXTENSION_KEYWORD.test(key)) found.add(key);
      stack.push(child);
    }
  }
  return found;
}

/** What ajv accepts as a keyword name; an `x-` key outside it stays unknown and is rejected. */
const EXTENSION_KEYWORD = /^x-[a-z0-9_$:-]*$/i;

function runValidator(validator: ValidateFunction, data: unknown): SdfErrorDetail[] {
  try {
    if (validator(data)) return [];
  } catch {
    return [{ path: '', message: 'data.json is nested too deeply to validate' }];
  }
  return (validator.errors ?? []).map(toDetail);
}

/** Points at the offending member itself, not only its parent (F3: `/invoice_number`). */
function toDetail(error: ErrorObject): SdfErrorDetail {
  const params = error.params as Record<string, unknown>;
  let path = error.instancePath;
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    path += `/${pointerToken(params.missingProperty)}`;
  } else if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    path += `/${pointerToken(params.additionalProperty)}`;
  }
  return { path, message: error.message ?? error.keyword };
}
