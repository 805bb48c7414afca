import { randomUUID } from 'node:crypto';
import { SdfError } from '../errors.js';
import { nowWithOffset } from '../rules/time.js';
import { SUPPORTED_SDF_VERSION } from '../rules/version.js';
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
}

export interface PackResult {
  archive: Buffer;
  /** meta.json as written (format shape of SDF_FORMAT 4.6). */
  meta: Record<string, string>;
}

const json = (value: unknown): Buffer => Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');

/**
 * Rule 10 / SDF_FORMAT 5: the producer. It generates document_id (UUID v4, rule 7), sets sdf_version
 * and the time with its offset, renders the PDF when none is given, then validates the finished archive
 * with the same validate() consumers use; an archive that fails is never returned.
 */
export async function pack(input: PackInput): Promise<PackResult> {
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
  const files: [string, Buffer][] = [
    ['visual.pdf', input.pdf ?? (await render(input.data))],
    ['data.json', json(input.data)],
    ['schema.json', json(input.schema)],
    ['meta.json', json(meta)],
  ];
  for (const [path, bytes] of Object.entries(input.vendor ?? {})) files.push([`vendor/${path}`, bytes]);
  const archive = await writeZip(files);
  const result = await validate(archive);
  if (!result.valid && result.error) {
    const { code, message, file, details } = result.error;
    throw new SdfError(code, `refusing to write an invalid SDF file: ${message}`, file, details);
  }
  return { archive, meta };
}
