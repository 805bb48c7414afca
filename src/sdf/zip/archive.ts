import { SdfError } from '../errors.js';
import { resolveLimits, type Limits } from '../limits.js';
import {
  inflateEntry,
  inflateEntryWith,
  locateEntryData,
  readCentralDirectory,
  type CentralDirectory,
  type RawInflater,
  type ZipEntry,
} from './reader.js';
import { toSource, type ByteSource } from './source.js';

/** An archive whose every entry has been inflated within the F2 limits. Directory entries are listed but hold no bytes. */
export interface Archive {
  readonly entries: ZipEntry[];
  readonly centralOffset: number;
  /** Inflated bytes by entry name, files only. */
  readonly files: Map<string, Buffer>;
}

/**
 * F1 + F2: opens and fully inflates an archive from a buffer or a file path. `inflateRaw` replaces
 * Node's zlib for Deflate entries (the browser reader passes its native inflater); the limits, sizes
 * and CRC-32 are checked on its output exactly as on zlib's.
 */
export async function openArchive(
  input: Buffer | string,
  limits?: Partial<Limits>,
  inflateRaw?: RawInflater,
): Promise<Archive> {
  const resolved = resolveLimits(limits);
  const source = await toSource(input);
  try {
    const directory = await readCentralDirectory(source, resolved);
    const files = new Map<string, Buffer>();
    let total = 0;
    for (const entry of directory.entries) {
      const data = await readEntryData(source, directory, entry, resolved, total, inflateRaw);
      total += data.length;
      if (!entry.name.endsWith('/')) files.set(entry.name, data);
      else if (data.length > 0)
        throw new SdfError('SDF_ERROR_INVALID_ARCHIVE', `directory entry ${entry.name} holds data`);
    }
    return { entries: directory.entries, centralOffset: directory.centralOffset, files };
  } finally {
    await source.close();
  }
}

async function readEntryData(
  source: ByteSource,
  directory: CentralDirectory,
  entry: ZipEntry,
  limits: Limits,
  inflatedSoFar: number,
  inflateRaw?: RawInflater,
): Promise<Buffer> {
  const start = await locateEntryData(source, entry, directory.centralOffset);
  const compressed = await source.read(start, entry.compressedSize);
  const remainingTotal = limits.maxTotalBytes - inflatedSoFar;
  const byEntry = limits.maxEntryBytes <= remainingTotal;
  const budget = byEntry ? limits.maxEntryBytes : remainingTotal;
  const limitName = byEntry ? 'per-entry limit' : 'total size limit';
  if (inflateRaw) return inflateEntryWith(inflateRaw, entry, compressed, budget, limitName);
  return inflateEntry(entry, compressed, budget, limitName);
}

/**
 * S2: the partial read. Opens the central directory and inflates only the named entries, each under
 * the per-entry limit or its own smaller `maxBytes` (then `overLimit` names the error). Missing entries
 * come back undefined.
 */
export async function readEntries(
  input: Buffer | string,
  names: { name: string; maxBytes?: number; overLimit?: () => SdfError }[],
  limits?: Partial<Limits>,
): Promise<Map<string, Buffer | undefined>> {
  const resolved = resolveLimits(limits);
  const source = await toSource(input);
  try {
    const directory = await readCentralDirectory(source, resolved);
    const out = new Map<string, Buffer | undefined>();
    for (const { name, maxBytes, overLimit } of names) {
      const entry = directory.entries.find((e) => e.name === name);
      if (!entry) {
        out.set(name, undefined);
        continue;
      }
      if (maxBytes === undefined || maxBytes >= resolved.maxEntryBytes) {
        out.set(name, await readEntryData(source, directory, entry, resolved, 0));
        continue;
      }
      // An entry with a cap of its own: inflation stops once the cap is crossed, whatever the header says.
      const start = await locateEntryData(source, entry, directory.centralOffset);
      const compressed = await source.read(start, entry.compressedSize);
      try {
        out.set(name, inflateEntry(entry, compressed, maxBytes, `limit of ${maxBytes} bytes for ${name}`));
      } catch (error) {
        if (overLimit && error instanceof SdfError && error.code === 'SDF_ERROR_ARCHIVE_TOO_LARGE') throw overLimit();
        throw error;
      }
    }
    return out;
  } finally {
    await source.close();
  }
}
