import type { Limits } from './limits.js';
import { parseMeta, type NormalizedMeta } from './rules/meta.js';
import { readEntries } from './zip/archive.js';
import { readCentralDirectory } from './zip/reader.js';
import { toSource } from './zip/source.js';

/** data.json is consulted for document_type only when it is this small: then it costs about as much as meta.json. */
export const CHEAP_DATA_BYTES = 256 * 1024;

/**
 * S2: the upload-time partial read. Reads the central directory (so archive-level faults surface:
 * SDF_ERROR_NOT_ZIP, _INVALID_ARCHIVE, _ARCHIVE_TOO_LARGE) and meta.json, nothing else; the rest is
 * the validation job's. When meta.json has no document_type, data.json supplies it (F4) only if it
 * inflates to at most CHEAP_DATA_BYTES; otherwise, or if data.json is unreadable, document_type stays
 * undefined and validation settles it.
 */
export async function readMeta(input: Buffer | string, limits?: Partial<Limits>): Promise<NormalizedMeta> {
  const entries = await readEntries(input, [{ name: 'meta.json' }], limits);
  const meta = parseMeta(entries.get('meta.json'));
  if (meta.document_type !== undefined) return meta;
  try {
    const source = await toSource(input);
    let declared: number | undefined;
    try {
      declared = (await readCentralDirectory(source)).entries.find((e) => e.name === 'data.json')?.declaredSize;
    } finally {
      await source.close();
    }
    if (declared === undefined || declared > CHEAP_DATA_BYTES) return meta;
    const data = (await readEntries(input, [{ name: 'data.json', maxBytes: CHEAP_DATA_BYTES }], limits)).get(
      'data.json',
    );
    const parsed: unknown = data ? JSON.parse(data.toString('utf8')) : undefined;
    const type = (parsed as Record<string, unknown> | undefined)?.document_type;
    if (typeof type === 'string' && type !== '') meta.document_type = type;
  } catch {
    // data.json is judged by validation, not by the upload; a fault here only means no document_type yet.
  }
  return meta;
}
