import type { Limits } from './limits.js';
import { parseMeta, type NormalizedMeta } from './rules/meta.js';
import { readEntries } from './zip/archive.js';

/**
 * S2: the upload-time partial read. Reads the central directory (so archive-level faults surface:
 * SDF_ERROR_NOT_ZIP, _INVALID_ARCHIVE, _ARCHIVE_TOO_LARGE) and meta.json alone; no other entry is
 * inflated. When meta.json has no document_type, it stays undefined here and validation settles it
 * from data.json (F4).
 */
export async function readMeta(input: Buffer | string, limits?: Partial<Limits>): Promise<NormalizedMeta> {
  const entries = await readEntries(input, [{ name: 'meta.json' }], limits);
  return parseMeta(entries.get('meta.json'));
}
