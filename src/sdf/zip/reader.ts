import zlib from 'node:zlib';
import { SdfError } from '../errors.js';
import { DEFAULT_LIMITS, type Limits } from '../limits.js';
import { crc32 } from './crc32.js';
import type { ByteSource } from './source.js';
import { checkEntryNames } from './names.js';

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const EOCD_SIZE = 22;
const MAX_COMMENT = 0xffff;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/** One central-directory record, as declared. Declared sizes are only ever used to reject early, never to accept. */
export interface ZipEntry {
  readonly name: string;
  readonly method: number;
  readonly flags: number;
  readonly crc32: number;
  readonly compressedSize: number;
  readonly declaredSize: number;
  readonly localHeaderOffset: number;
  /** The raw central-directory record, kept so a signer can copy entries verbatim (F9). */
  readonly centralRecord: Buffer;
}

export interface CentralDirectory {
  readonly entries: ZipEntry[];
  readonly centralOffset: number;
}

const invalid = (message: string, path = ''): SdfError =>
  new SdfError('SDF_ERROR_INVALID_ARCHIVE', message, undefined, [{ path, message }]);

const tooLarge = (message: string, path = ''): SdfError =>
  new SdfError('SDF_ERROR_ARCHIVE_TOO_LARGE', message, undefined, [{ path, message }]);

/** Reads the end record and the central directory; nothing else is touched. */
export async function readCentralDirectory(
  source: ByteSource,
  limits: Limits = DEFAULT_LIMITS,
): Promise<CentralDirectory> {
  const tailLength = Math.min(source.size, EOCD_SIZE + MAX_COMMENT);
  const tail = await source.read(source.size - tailLength, tailLength);
  let eocd = -1;
  // The end record is the last one whose comment length reaches exactly to the end of the file.
  for (let i = tail.length - EOCD_SIZE; i >= 0; i--) {
    if (tail.readUInt32LE(i) === EOCD_SIGNATURE && i + EOCD_SIZE + tail.readUInt16LE(i + 20) === tail.length) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) {
    throw new SdfError('SDF_ERROR_NOT_ZIP', 'the file is not a ZIP archive (no end of central directory record)');
  }
  const diskNumber = tail.readUInt16LE(eocd + 4);
  const centralDisk = tail.readUInt16LE(eocd + 6);
  const entriesOnDisk = tail.readUInt16LE(eocd + 8);
  const entryCount = tail.readUInt16LE(eocd + 10);
  const centralSize = tail.readUInt32LE(eocd + 12);
  const centralOffset = tail.readUInt32LE(eocd + 16);
  const eocdOffset = source.size - tailLength + eocd;
  if (diskNumber !== 0 || centralDisk !== 0 || entriesOnDisk !== entryCount) {
    throw invalid('multi-disk ZIP archives are not supported');
  }
  if (entryCount === 0xffff || centralOffset === 0xffffffff || centralSize === 0xffffffff) {
    // SDF_FORMAT 4.1: ZIP64 only above 4 GB, which is far beyond the F2 limits anyway.
    throw invalid('ZIP64 archives are not accepted');
  }
  if (entryCount > limits.maxEntries) {
    throw tooLarge(`the archive has ${entryCount} entries; the limit is ${limits.maxEntries}`); // F2
  }
  if (centralOffset + centralSize > eocdOffset) throw invalid('the central directory lies outside the archive');

  const central = await source.read(centralOffset, centralSize);
  const entries: ZipEntry[] = [];
  let pos = 0;
  for (let index = 0; index < entryCount; index++) {
    if (pos + 46 > central.length || central.readUInt32LE(pos) !== CENTRAL_SIGNATURE) {
      throw invalid('the central directory is truncated or corrupt');
    }
    const nameLength = central.readUInt16LE(pos + 28);
    const recordLength = 46 + nameLength + central.readUInt16LE(pos + 30) + central.readUInt16LE(pos + 32);
    if (pos + recordLength > central.length) throw invalid('the central directory is truncated or corrupt');
    const record = central.subarray(pos, pos + recordLength);
    entries.push(parseCentralRecord(record, nameLength, centralOffset));
    pos += recordLength;
  }
  if (pos !== central.length) throw invalid('the central directory size does not match its records');
  checkEntryNames(entries.map((e) => e.name)); // F1
  declaredSizeCheck(entries, limits);
  return { entries, centralOffset };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseCentralRecord(record: Buffer, nameLength: number, centralOffset: number): ZipEntry {
  const versionMadeBy = record.readUInt16LE(4);
  const flags = record.readUInt16LE(8);
  const method = record.readUInt16LE(10);
  const externalAttributes = record.readUInt32LE(38);
  let name: string;
  try {
    name = utf8.decode(record.subarray(46, 46 + nameLength));
  } catch {
    throw invalid('an entry name is not valid UTF-8'); // SDF_FORMAT 4.1
  }
  const path = `/${name}`;
  // F1: encrypted entries (traditional or strong encryption, or the AES method 99) are refused.
  if ((flags & 0x0001) !== 0 || (flags & 0x0040) !== 0 || method === 99) {
    throw invalid(`entry ${name} is encrypted`, path);
  }
  // F1: a symlink entry (Unix mode in the high half of the external attributes).
  const hostUnix = versionMadeBy >> 8 === 3 || versionMadeBy >> 8 === 19;
  if (hostUnix && ((externalAttributes >>> 16) & S_IFMT) === S_IFLNK) {
    throw invalid(`entry ${name} is a symbolic link`, path);
  }
  if (method !== 0 && method !== 8) {
    throw invalid(`entry ${name} uses compression method ${method}; only Store and Deflate are allowed`, path);
  }
  const localHeaderOffset = record.readUInt32LE(42);
  const compressedSize = record.readUInt32LE(20);
  if (localHeaderOffset + 30 + compressedSize > centralOffset) {
    throw invalid(`entry ${name} points outside the archive data`, path);
  }
  return {
    name,
    method,
    flags,
    crc32: record.readUInt32LE(16),
    compressedSize,
    declaredSize: record.readUInt32LE(24),
    localHeaderOffset,
    centralRecord: record,
  };
}

/** Headers may be used to say no early (F2), never to say yes. */
function declaredSizeCheck(entries: ZipEntry[], limits: Limits): void {
  let total = 0;
  for (const entry of entries) {
    if (entry.declaredSize > limits.maxEntryBytes) {
      throw tooLarge(`entry ${entry.name} declares ${entry.declaredSize} bytes; the limit is ${limits.maxEntryBytes}`);
    }
    total += entry.declaredSize;
  }
  if (total > limits.maxTotalBytes) {
    throw tooLarge(`the entries declare ${total} bytes in all; the limit is ${limits.maxTotalBytes}`);
  }
}

/** Where the compressed bytes of an entry start, after checking its local header agrees with the central record. */
export async function locateEntryData(source: ByteSource, entry: ZipEntry, centralOffset: number): Promise<number> {
  const header = await source.read(entry.localHeaderOffset, 30);
  if (header.length < 30 || header.readUInt32LE(0) !== LOCAL_SIGNATURE) {
    throw invalid(`entry ${entry.name} has no valid local header`, `/${entry.name}`);
  }
  const nameLength = header.readUInt16LE(26);
  const extraLength = header.readUInt16LE(28);
  const localName = await source.read(entry.localHeaderOffset + 30, nameLength);
  const centralName = entry.centralRecord.subarray(46, 46 + entry.centralRecord.readUInt16LE(28));
  // Two names for one entry would let different tools see different files.
  if (!localName.equals(centralName) || (header.readUInt16LE(6) & 0x0001) !== 0) {
    throw invalid(`entry ${entry.name}: local header disagrees with the central directory`, `/${entry.name}`);
  }
  const start = entry.localHeaderOffset + 30 + nameLength + extraLength;
  if (start + entry.compressedSize > centralOffset) {
    throw invalid(`entry ${entry.name} points outside the archive data`, `/${entry.name}`);
  }
  return start;
}

/**
 * An inflater of the host's own for raw Deflate (the browser reader's native one). It must count the
 * bytes it produces and stop once they pass `maxOutputLength`, failing with an error whose `code` is
 * `ERR_BUFFER_TOO_LARGE` as Node's zlib does; any other failure means the stream is not valid Deflate.
 * The entry's size is still checked by the reader on what it returns, and so is its CRC-32 unless the
 * inflater answers that it checked the output against the entry's `crc32` itself (the browser's gzip
 * decoder does so natively, where the sum in JavaScript is slow on a large entry).
 */
export type RawInflater = (
  compressed: Uint8Array,
  maxOutputLength: number,
  sizeHint: number,
  crc32: number,
) => Promise<Buffer | CheckedOutput>;

/** An inflater's output whose CRC-32 it found equal to the entry's. */
export interface CheckedOutput {
  data: Buffer;
  crc32Checked: true;
}

/**
 * F2: inflates one entry, counting the bytes actually produced. zlib stops as soon as the output
 * would pass the budget, so a bomb costs at most `budget` bytes of memory, whatever its header says.
 */
export function inflateEntry(entry: ZipEntry, compressed: Buffer, budget: number, limitName: string): Buffer {
  if (entry.method === 0) return checkInflated(entry, storedData(entry, compressed, budget, limitName));
  let data: Buffer;
  try {
    // One output chunk of the declared size (plus the byte that shows the end) saves zlib joining
    // chunks. What a header that lies can reserve this way is bounded by the declared-size check
    // (F2 limits), and an entry whose size differs from its header is refused just below.
    const chunkSize = Math.max(64, Math.min(entry.declaredSize + 1, budget + 1));
    data = zlib.inflateRawSync(compressed, { maxOutputLength: budget + 1, chunkSize });
  } catch (error) {
    throw inflateError(entry, error, limitName);
  }
  return checkInflated(entry, withinBudget(entry, data, budget, limitName));
}

/** inflateEntry with the host's inflater; the same bound, size and CRC-32 checks, the same errors. */
export async function inflateEntryWith(
  inflater: RawInflater,
  entry: ZipEntry,
  compressed: Buffer,
  budget: number,
  limitName: string,
): Promise<Buffer> {
  if (entry.method === 0) return checkInflated(entry, storedData(entry, compressed, budget, limitName));
  let output: Buffer | CheckedOutput;
  try {
    output = await inflater(compressed, budget + 1, Math.min(entry.declaredSize, budget), entry.crc32);
  } catch (error) {
    throw inflateError(entry, error, limitName);
  }
  const checked = !(output instanceof Uint8Array) && output.crc32Checked === true;
  const data = output instanceof Uint8Array ? output : output.data;
  return checkInflated(entry, withinBudget(entry, data, budget, limitName), checked);
}

function storedData(entry: ZipEntry, compressed: Buffer, budget: number, limitName: string): Buffer {
  if (compressed.length > budget) throw tooLarge(`entry ${entry.name} exceeds the ${limitName}`, `/${entry.name}`);
  return compressed;
}

function inflateError(entry: ZipEntry, error: unknown, limitName: string): SdfError {
  if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
    return tooLarge(`entry ${entry.name} inflates beyond the ${limitName}`, `/${entry.name}`);
  }
  return invalid(`entry ${entry.name} is not a valid Deflate stream`, `/${entry.name}`);
}

function withinBudget(entry: ZipEntry, data: Buffer, budget: number, limitName: string): Buffer {
  if (data.length > budget) throw tooLarge(`entry ${entry.name} inflates beyond the ${limitName}`, `/${entry.name}`);
  return data;
}

function checkInflated(entry: ZipEntry, data: Buffer, crc32Checked = false): Buffer {
  const path = `/${entry.name}`;
  if (data.length !== entry.declaredSize) {
    // F2: a header that lies about the size is a structural fault even when the real size is small.
    throw invalid(
      `entry ${entry.name} inflates to ${data.length} bytes but its header declares ${entry.declaredSize}`,
      path,
    );
  }
  if (!crc32Checked && crc32(data) !== entry.crc32) throw invalid(`entry ${entry.name} fails its CRC-32 check`, path);
  return data;
}
