/**
 * The part of `node:zlib` the format core uses, for the browser: raw and zlib-wrapped inflate on
 * fflate, with the same output bound as Node's `maxOutputLength` (F2: the bytes actually produced are
 * counted, and inflating stops as soon as they pass the bound, so a bomb costs at most that much).
 */
import { Inflate } from 'fflate';
import { allocOutput } from './spare-memory.js';

interface InflateOptions {
  maxOutputLength?: number;
  /** Node's output chunk size; here the expected output size (an archive entry's declared size). */
  chunkSize?: number;
}

/** Node's error for output over maxOutputLength; the core recognises it by its code. */
class BufferTooLarge extends RangeError {
  readonly code = 'ERR_BUFFER_TOO_LARGE';
}

function run(stream: Inflate, input: Uint8Array, options: InflateOptions = {}): Buffer {
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
  const out = allocOutput(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/**
 * Raw Deflate from `start`. The stored blocks at its head (a deflater writes data that does not
 * compress, a scan's image data, as stored blocks) are copied straight into the output, summed against
 * the bound first; from the first compressed block on, fflate inflates the rest with the output so far
 * as its window. Returns the output and where the Deflate data ended (null: not known, fflate read it).
 */
function inflateRaw(
  given: Uint8Array,
  start: number,
  options: InflateOptions = {},
): { out: Buffer; end: number | null } {
  // A plain view: `subarray` of the Buffer adapter's Buffer goes through its constructor, several times
  // slower over the hundreds of blocks of a scan.
  const input = new Uint8Array(given.buffer, given.byteOffset, given.length);
  const max = options.maxOutputLength ?? Number.MAX_SAFE_INTEGER;
  let total = 0;
  let pos = start;
  let final = false;
  // First pass: the stored head's size, without copying.
  while (pos + 5 <= input.length) {
    const header = input[pos]!;
    if (((header >> 1) & 3) !== 0) break;
    const length = input[pos + 1]! | (input[pos + 2]! << 8);
    const inverse = input[pos + 3]! | (input[pos + 4]! << 8);
    if ((length ^ inverse) !== 0xffff || pos + 5 + length > input.length) break;
    total += length;
    if (total > max) throw new BufferTooLarge(`Cannot create a Buffer larger than ${max} bytes`);
    pos += 5 + length;
    if (header & 1) {
      final = true;
      break;
    }
  }
  // The output in one piece when its size is known (an entry's declared size): the stored head goes
  // straight to its place, and what follows it after; otherwise the head alone, joined with the rest below.
  const expected = options.chunkSize ?? 0;
  const head = allocOutput(expected > total && expected <= max ? expected : total);
  for (let at = 0, p = start; p < pos;) {
    const length = input[p + 1]! | (input[p + 2]! << 8);
    head.set(input.subarray(p + 5, p + 5 + length), at);
    at += length;
    p += 5 + length;
  }
  if (final) return { out: head.subarray(0, total), end: pos };
  const dictionary = total > 0 ? head.subarray(Math.max(0, total - 32768), total) : undefined;
  const rest = run(new Inflate({ dictionary }), input.subarray(pos), { maxOutputLength: max - total });
  if (total === 0) return { out: rest, end: null };
  if (total + rest.length <= head.length) {
    head.set(rest, total);
    return { out: head.subarray(0, total + rest.length), end: null };
  }
  const out = allocOutput(total + rest.length);
  out.set(head.subarray(0, total), 0);
  out.set(rest, total);
  return { out, end: null };
}

export function inflateRawSync(input: Uint8Array, options?: InflateOptions): Buffer {
  return inflateRaw(input, 0, options).out;
}

/** Adler-32 (RFC 1950), the zlib trailer's check, summed in runs short enough never to overflow. */
function adler32(data: Uint8Array): number {
  let a = 1;
  let b = 0;
  for (let i = 0; i < data.length;) {
    const end = Math.min(i + 5552, data.length);
    for (; i < end; i++) {
      a += data[i]!;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

const readAdler = (input: Uint8Array, at: number): number =>
  ((input[at]! << 24) | (input[at + 1]! << 16) | (input[at + 2]! << 8) | input[at + 3]!) >>> 0;

/** A zlib stream (RFC 1950): header, Deflate data, Adler-32, which zlib checks and fflate does not. */
export function inflateSync(input: Uint8Array, options?: InflateOptions): Buffer {
  const header =
    input.length >= 2 && (input[0]! & 0x0f) === 8 && ((input[0]! << 8) | input[1]!) % 31 === 0 && !(input[1]! & 0x20);
  if (!header) throw new Error('incorrect header check');
  const { out, end } = inflateRaw(input, 2, options);
  // Where fflate read the data itself, the trailer is taken as the stream's last four bytes.
  const trailer = end ?? input.length - 4;
  if (trailer < 2 || trailer + 4 > input.length || readAdler(input, trailer) !== adler32(out)) {
    throw new Error('incorrect data check');
  }
  return out;
}

/**
 * Slicing-by-16 tables, one after the other in one array: sixteen bytes a step instead of one (the plain
 * table walk is far slower in JavaScript). Table t sits at t * 256. Sixteen bytes a step took 9.5 to 10 ms
 * over 19 MB in Chromium's worker here, eight 11 to 12 ms; the same walk in WebAssembly was no faster
 * (the table loads are the work), and Node's native sum takes 3 to 4 ms.
 */
const CRC_TABLE = (() => {
  const table = new Int32Array(16 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    for (let t = 1; t < 16; t++)
      table[t * 256 + n] = (table[(t - 1) * 256 + n]! >>> 8) ^ table[table[(t - 1) * 256 + n]! & 0xff]!;
  }
  return table;
})();

/** Whole words are read as little-endian Int32s (every browser's order); elsewhere, byte by byte. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** CRC-32 (ISO 3309, as ZIP uses it), what Node's zlib.crc32 computes. */
export function crc32(data: Uint8Array): number {
  const t = CRC_TABLE;
  let crc = -1;
  let i = 0;
  // Bytes up to a 4-byte boundary, then four aligned words a step (a quarter of the loads of reading bytes).
  const head = Math.min(data.length, (4 - (data.byteOffset & 3)) & 3);
  for (; i < head; i++) crc = t[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  if (LITTLE_ENDIAN && data.length - i >= 16) {
    const words = new Int32Array(data.buffer, data.byteOffset + i, ((data.length - i) >> 4) << 2);
    for (let w = 0; w < words.length; w += 4) {
      const a = words[w]! ^ crc;
      const b = words[w + 1]!;
      const c = words[w + 2]!;
      const d = words[w + 3]!;
      crc =
        t[3840 + (a & 0xff)]! ^
        t[3584 + ((a >>> 8) & 0xff)]! ^
        t[3328 + ((a >>> 16) & 0xff)]! ^
        t[3072 + (a >>> 24)]! ^
        t[2816 + (b & 0xff)]! ^
        t[2560 + ((b >>> 8) & 0xff)]! ^
        t[2304 + ((b >>> 16) & 0xff)]! ^
        t[2048 + (b >>> 24)]! ^
        t[1792 + (c & 0xff)]! ^
        t[1536 + ((c >>> 8) & 0xff)]! ^
        t[1280 + ((c >>> 16) & 0xff)]! ^
        t[1024 + (c >>> 24)]! ^
        t[768 + (d & 0xff)]! ^
        t[512 + ((d >>> 8) & 0xff)]! ^
        t[256 + ((d >>> 16) & 0xff)]! ^
        t[d >>> 24]!;
    }
    i += words.length * 4;
  }
  for (; i < data.length; i++) crc = t[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

export default { inflateRawSync, inflateSync, crc32 };
