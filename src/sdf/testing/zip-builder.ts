import zlib from 'node:zlib';
import { crc32 } from '../zip/crc32.js';

/** One entry as a test wants it, including the lies a hostile archive tells. */
export interface RawZipEntry {
  name: string;
  data: Buffer;
  /** 8 (Deflate, default) or 0 (Store); any other number is written as is. */
  method?: number;
  /** Pre-compressed bytes, for bombs built without holding their inflated size. */
  compressed?: Buffer;
  /** Size written in the headers; defaults to the true size. */
  declaredSize?: number;
  flags?: number;
  /** Unix mode, written in the high half of the external attributes (made-by Unix). */
  unixMode?: number;
}

/** A deliberately plain ZIP writer for fixtures: it writes exactly what it is told. */
export function buildZip(entries: RawZipEntry[]): Buffer {
  const parts: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const method = entry.method ?? 8;
    const compressed = entry.compressed ?? (method === 8 ? zlib.deflateRawSync(entry.data) : entry.data);
    const name = Buffer.from(entry.name, 'utf8');
    const size = entry.declaredSize ?? entry.data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(entry.flags ?? 0x0800, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE((46 << 9) | (1 << 5) | 1, 12);
    local.writeUInt32LE(crc32(entry.data), 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(size >>> 0, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    local.copy(central, 6, 4, 30);
    central.writeUInt32LE(((entry.unixMode ?? (entry.name.endsWith('/') ? 0o40755 : 0o100644)) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    parts.push(local, name, compressed);
    centrals.push(central, name);
    offset += local.length + name.length + compressed.length;
  }
  const directory = Buffer.concat(centrals);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(entries.length, 8);
  eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(directory.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, directory, eocd]);
}

/**
 * A Deflate stream that inflates to `megabytes` MiB of zeros while staying about a kilobyte per MiB:
 * one sync-flushed block repeated (its back-references stay inside itself), then an empty final block.
 */
export function deflateBomb(megabytes: number): Buffer {
  const block = zlib.deflateRawSync(Buffer.alloc(1024 * 1024), { finishFlush: zlib.constants.Z_SYNC_FLUSH, level: 9 });
  const final = zlib.deflateRawSync(Buffer.alloc(0));
  return Buffer.concat([...Array.from({ length: megabytes }, () => block), final]);
}
