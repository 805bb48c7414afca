import { SdfError } from '../errors.js';
import type { ZipEntry } from '../zip/reader.js';
import { crc32 } from '../zip/crc32.js';

const LOCAL_SIGNATURE = 0x04034b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const EOCD_SIGNATURE = 0x06054b50;
const DESCRIPTOR_SIGNATURE = 0x08074b50;

function dosDateTime(date: Date): { time: number; date: number } {
  return {
    time: (date.getUTCHours() << 11) | (date.getUTCMinutes() << 5) | Math.floor(date.getUTCSeconds() / 2),
    date: (Math.max(0, date.getUTCFullYear() - 1980) << 9) | ((date.getUTCMonth() + 1) << 5) | date.getUTCDate(),
  };
}

/**
 * F9: "signing never changes any other entry". Every other entry is copied byte for byte (local
 * header, data and data descriptor); only the central directory is rewritten for new offsets, and the
 * named entry is replaced by a stored entry appended at the end.
 */
export function replaceEntryVerbatim(
  archive: Buffer,
  entries: ZipEntry[],
  name: string,
  content: Buffer,
  when: Date,
): Buffer {
  const parts: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    if (entry.name === name) continue;
    const start = entry.localHeaderOffset;
    const dataStart = start + 30 + archive.readUInt16LE(start + 26) + archive.readUInt16LE(start + 28);
    let end = dataStart + entry.compressedSize;
    if ((entry.flags & 0x0008) !== 0)
      end += end + 4 <= archive.length && archive.readUInt32LE(end) === DESCRIPTOR_SIGNATURE ? 16 : 12;
    if (end > archive.length) throw new SdfError('SDF_ERROR_INVALID_ARCHIVE', `entry ${entry.name} is truncated`);
    parts.push(archive.subarray(start, end));
    const central = Buffer.from(entry.centralRecord);
    central.writeUInt32LE(offset, 42);
    centrals.push(central);
    offset += end - start;
  }
  const nameBytes = Buffer.from(name, 'utf8');
  const { time, date } = dosDateTime(when);
  const crc = crc32(content);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(LOCAL_SIGNATURE, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(0x0800, 6); // UTF-8 names
  local.writeUInt16LE(0, 8); // stored
  local.writeUInt16LE(time, 10);
  local.writeUInt16LE(date, 12);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(content.length, 18);
  local.writeUInt32LE(content.length, 22);
  local.writeUInt16LE(nameBytes.length, 26);
  parts.push(local, nameBytes, content);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(CENTRAL_SIGNATURE, 0);
  central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix, so the mode below is meaningful
  local.copy(central, 6, 4, 30);
  central.writeUInt32LE((0o100644 << 16) >>> 0, 38);
  central.writeUInt32LE(offset, 42);
  centrals.push(Buffer.concat([central, nameBytes]));
  offset += local.length + nameBytes.length + content.length;

  const directory = Buffer.concat(centrals);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(EOCD_SIGNATURE, 0);
  eocd.writeUInt16LE(centrals.length, 8);
  eocd.writeUInt16LE(centrals.length, 10);
  eocd.writeUInt32LE(directory.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, directory, eocd]);
}
