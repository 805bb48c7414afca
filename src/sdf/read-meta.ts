import { resolveLimits, type Limits } from './limits.js';
import { metaTooLarge, parseMeta, type NormalizedMeta } from './rules/meta.js';
import { readEntries } from './zip/archive.js';

/**
 * S2: the upload-time partial read. Reads the central directory (so archive-level faults surface:
 * SDF_ERROR_NOT_ZIP, _INVALID_ARCHIVE, _ARCHIVE_TOO_LARGE) and meta.json alone; no other entry is
 * inflated, and meta.json only up to `maxMetaBytes` (beyond: SDF_ERROR_INVALID_META). When meta.json has no document_type, it stays undefined here and validation settles it
 * from data.json (F4).
 */
export async function readMeta(input: Buffer | string, limits?: Partial<Limits>): Promise<NormalizedMeta> {
  const resolved = resolveLimits(limits);
  // Runs on the API: meta.json is inflated under its own small cap, so a hostile one costs at most that.
  const entries = await readEntries(
    input,
    [{ name: 'meta.json', maxBytes: resolved.maxMetaBytes, overLimit: () => metaTooLarge(resolved.maxMetaBytes) }],
    resolved,
  );
  return parseMeta(entries.get('meta.json'), resolved);
}
