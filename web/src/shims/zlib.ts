/**
 * The part of `node:zlib` the format core uses, for the browser: raw and zlib-wrapped inflate on
 * fflate, with the same output bound as Node's `maxOutputLength` (F2: the bytes actually produced are
 * counted, and inflating stops as soon as they pass the bound, so a bomb costs at most that much).
 */
import { Inflate, Unzlib } from 'fflate';

interface InflateOptions {
  maxOutputLength?: number;
  chunkSize?: number;
}

/** Node's error for output over maxOutputLength; the core recognises it by its code. */
class BufferTooLarge extends RangeError {
  readonly code = 'ERR_BUFFER_TOO_LARGE';
}

function run(stream: Inflate | Unzlib, input: Uint8Array, options: InflateOptions = {}): Buffer {
  const max = options.maxOutputLength ?? Number.MAX_SAFE_INTEGER;
  const chunks: Uint8Array[] = [];
  let total = 0;
  let ended = false;
  stream.ondata = (chunk, final) => {
    total += chunk.length;
    if (total > max) throw new BufferTooLarge(`Cannot create a Buffer larger than ${max} bytes`);
    chunks.push(chunk);
    if (final) ended = true;
  };
  // Fed in slices, so the bound stops a bomb after one slice's worth of output, not after all of it.
  const SLICE = 64 * 1024;
  for (let at = 0; at < input.length; at += SLICE) {
    const end = Math.min(at + SLICE, input.length);
    stream.push(input.subarray(at, end), end === input.length);
    if (ended) break;
  }
  if (input.length === 0) stream.push(input, true);
  if (!ended) throw new Error('unexpected end of file');
  const out = Buffer.allocUnsafe(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/**
 * A raw Deflate stream made only of stored blocks (what a deflater writes for data that does not
 * compress: a scan's JPEG or image data) is copied block by block into one buffer of its exact size,
 * after a first pass has summed the blocks against the bound. Null when any block is compressed (or
 * the stream is cut short), which the general path then handles and reports.
 */
function storedOnly(input: Uint8Array, max: number): Buffer | null {
  let total = 0;
  let pos = 0;
  for (;;) {
    if (pos + 5 > input.length) return null;
    const header = input[pos]!;
    if (((header >> 1) & 3) !== 0) return null;
    const length = input[pos + 1]! | (input[pos + 2]! << 8);
    const inverse = input[pos + 3]! | (input[pos + 4]! << 8);
    if ((length ^ inverse) !== 0xffff || pos + 5 + length > input.length) return null;
    total += length;
    if (total > max) throw new BufferTooLarge(`Cannot create a Buffer larger than ${max} bytes`);
    pos += 5 + length;
    if (header & 1) break;
  }
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (pos = 0; ;) {
    const header = input[pos]!;
    const length = input[pos + 1]! | (input[pos + 2]! << 8);
    out.set(input.subarray(pos + 5, pos + 5 + length), at);
    at += length;
    pos += 5 + length;
    if (header & 1) return out;
  }
}

export function inflateRawSync(input: Uint8Array, options?: InflateOptions): Buffer {
  return storedOnly(input, options?.maxOutputLength ?? Number.MAX_SAFE_INTEGER) ?? run(new Inflate(), input, options);
}

export function inflateSync(input: Uint8Array, options?: InflateOptions): Buffer {
  return run(new Unzlib(), input, options);
}

/** Slicing-by-8 tables: eight bytes a step instead of one (the plain table walk is far slower in JavaScript). */
const CRC_TABLES = (() => {
  const tables = Array.from({ length: 8 }, () => new Uint32Array(256));
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    tables[0]![n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    for (let t = 1; t < 8; t++) tables[t]![n] = (tables[t - 1]![n]! >>> 8) ^ tables[0]![tables[t - 1]![n]! & 0xff]!;
  }
  return tables;
})();

/** CRC-32 (ISO 3309, as ZIP uses it), what Node's zlib.crc32 computes. */
export function crc32(data: Uint8Array): number {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = CRC_TABLES as [
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
  ];
  let crc = 0xffffffff;
  let i = 0;
  const end8 = data.length - (data.length % 8);
  for (; i < end8; i += 8) {
    const a = (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24)) ^ crc;
    crc =
      t7[a & 0xff]! ^
      t6[(a >>> 8) & 0xff]! ^
      t5[(a >>> 16) & 0xff]! ^
      t4[a >>> 24]! ^
      t3[data[i + 4]!]! ^
      t2[data[i + 5]!]! ^
      t1[data[i + 6]!]! ^
      t0[data[i + 7]!]!;
  }
  for (; i < data.length; i++) crc = t0[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

export default { inflateRawSync, inflateSync, crc32 };
