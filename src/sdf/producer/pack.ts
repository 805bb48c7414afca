import { randomUUID } from 'node:crypto';
import { SdfError } from '../errors.js';
import { resolveLimits, type Limits } from '../limits.js';
import { checkDataRules } from '../rules/data.js';
import { checkJsonShape, needsShapeCheck } from '../rules/json-shape.js';
import { findUnsafeText } from '../rules/text.js';
import { nowWithOffset } from '../rules/time.js';
import { SUPPORTED_SDF_VERSION } from '../rules/version.js';
import { compileSchema } from '../schema/compile.js';
import { validate } from '../validate.js';
import { render } from './render.js';
import { writeZip } from './zip-writer.js';

export interface PackMetaInput {
  document_type: string;
  issuer: string;
  issuer_id?: string;
  recipient?: string;
  schema_id?: string;
  locale?: string;
}

export interface PackInput {
  data: Record<string, unknown>;
  schema: Record<string, unknown> | boolean;
  meta: PackMetaInput;
  /** visual.pdf; rendered from data when absent. */
  pdf?: Buffer;
  /** Extra files, stored under vendor/ (F1). Keys are paths relative to vendor/. */
  vendor?: Record<string, Buffer>;
  /** F2 limits the finished file must keep (the service passes its configured ones). */
  limits?: Partial<Limits>;
}

export interface PackResult {
  archive: Buffer;
  /** meta.json as written (format shape of SDF_FORMAT 4.6). */
  meta: Record<string, string>;
}

const json = (value: unknown): Buffer => Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');

/**
 * Rule 10 / SDF_FORMAT 5 step 2, before anything is rendered: data.json within the limits (F2), the
 * format's data rules (F5), schema.json compiling (F6) and data.json passing it. Cheap next to
 * rendering, so bad data is refused at once with the errors validate() would give the packed file.
 */
function preflight(data: Buffer, schema: Buffer, parsed: PackInput, limits: Limits): void {
  checkJsonShape(schema, 'schema.json', limits, 'SDF_ERROR_INVALID_SCHEMA');
  if (needsShapeCheck(data, limits)) checkJsonShape(data, 'data.json', limits, 'SDF_ERROR_INVALID_DATA');
  const compiled = compileSchema(parsed.schema);
  checkDataRules(parsed.data, limits.maxJsonDepth);
  const unsafe = findUnsafeText(parsed.data);
  if (unsafe) {
    const message = `data.json: the string at ${unsafe.path || '/'} ${unsafe.reason}`;
    throw new SdfError('SDF_ERROR_INVALID_DATA', message, 'data.json', [{ path: unsafe.path, message }]);
  }
  const problems = compiled.check(parsed.data);
  if (problems.length > 0) {
    const first = problems[0]!;
    throw new SdfError(
      'SDF_ERROR_SCHEMA_MISMATCH',
      `refusing to write an invalid SDF file: data.json does not match schema.json: ${first.path || '/'} ${first.message}`,
      'data.json',
      problems,
    );
  }
}

/**
 * Rule 10 / SDF_FORMAT 5: the producer. It checks data against the schema first, generates
 * document_id (UUID v4, rule 7), sets sdf_version and the time with its offset, renders the PDF when
 * none is given, then validates the finished archive with the same validate() consumers use; an
 * archive that fails is never returned.
 */
export async function pack(input: PackInput): Promise<PackResult> {
  const limits = resolveLimits(input.limits);
  const meta: Record<string, string> = {
    sdf_version: SUPPORTED_SDF_VERSION,
    document_id: randomUUID(),
    document_type: input.meta.document_type,
    issuer: input.meta.issuer,
    created_at: nowWithOffset(),
  };
  for (const key of ['issuer_id', 'recipient', 'schema_id', 'locale'] as const) {
    const value = input.meta[key];
    if (value !== undefined) meta[key] = value;
  }
  const dataBytes = json(input.data);
  const schemaBytes = json(input.schema);
  preflight(dataBytes, schemaBytes, input, limits);
  const files: [string, Buffer][] = [
    ['visual.pdf', input.pdf ?? (await render(input.data))],
    ['data.json', dataBytes],
    ['schema.json', schemaBytes],
    ['meta.json', json(meta)],
  ];
  for (const [path, bytes] of Object.entries(input.vendor ?? {})) files.push([`vendor/${path}`, bytes]);
  const archive = await writeZip(files);
  const result = await validate(archive, { limits });
  if (!result.valid && result.error) {
    const { code, message, file, details } = result.error;
    throw new SdfError(code, `refusing to write an invalid SDF file: ${message}`, file, details);
  }
  return { archive, meta };
}
