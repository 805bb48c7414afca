import type { CheckedOutput } from '../../../src/sdf/zip/reader.js';
import { allocOutput } from '../shims/spare-memory.js';
import { inflateRawSync, inflateSync } from '../shims/zlib.js';

/** Node's error for output over maxOutputLength; the core recognises it by its code. */
class BufferTooLarge extends RangeError {
  readonly code = 'ERR_BUFFER_TOO_LARGE';
}

/** The most output one byte of Deflate data can give (a run of 258-byte matches in 2 bits each, about 1032:1). */
const MAX_RATIO = 1032;
/** Slices never smaller than this: at most about 1 MB of output each, when little of the budget is left. */
const MIN_SLICE = 1024;

/**
 * Raw Deflate for the format core's archive reader (`inflateRaw` of validateCore), on the browser's
 * own zlib (`DecompressionStream('deflate-raw')`), several times faster than inflate in JavaScript.
 *
 * F2: the output is counted chunk by chunk, and inflating stops once it passes `maxOutputLength`. The
 * input goes in slices whose output cannot pass what is left of the budget by more than that again (or
 * 1 MB; at most MAX_RATIO times their size), and the stream produces a slice's output only once the one
 * before has been counted, so a bomb is stopped within about the bound past it, as zlib in Node stops it
 * within its output chunk (the bound).
 *
 * Two cases go to the adapter of `node:zlib` (fflate) instead, so that every verdict stays Node's:
 * a stream that opens with a stored block (data that did not compress, a scan's image: the adapter
 * copies those without inflating), and any stream the browser refuses for a reason other than the
 * bound (Node's zlib and the browser's may differ on what follows the end of the data).
 */
export async function inflateRawNative(
  compressed: Uint8Array,
  maxOutputLength: number,
  sizeHint: number,
): Promise<Buffer> {
  if (storedBlockAt(compressed, 0) || typeof DecompressionStream === 'undefined') {
    return inflateRawSync(compressed, { maxOutputLength, chunkSize: sizeHint });
  }
  try {
    return await inflateNative('deflate-raw', compressed, maxOutputLength, sizeHint);
  } catch (error) {
    if (error instanceof BufferTooLarge) throw error;
    return inflateRawSync(compressed, { maxOutputLength, chunkSize: sizeHint });
  }
}

/** A gzip member's header (RFC 1952): Deflate, no name, no extra fields, no header CRC. */
const GZIP_HEADER = new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);

/**
 * An archive entry inflated with its CRC-32 checked by the browser, in native code: the entry's Deflate
 * data goes to the gzip decoder (`DecompressionStream('gzip')`) between a gzip header and a trailer
 * holding the entry's CRC-32 and size, and the decoder checks both on what it produced. Summing CRC-32 in
 * JavaScript took a fifth of a 19 MB scan's time in the reader, and copying its stored blocks in
 * JavaScript half; the decoder does both natively.
 *
 * Only success is taken from the gzip decoder: it means the Deflate data ended exactly where the entry
 * does and the output's CRC-32 is the entry's. On any other answer but the bound (a CRC-32 or size that
 * differs, bytes after the end of the data, data that is not Deflate) the entry is inflated again by
 * `inflateRawNative`, and the core checks size and CRC-32 on that as on zlib's output, so every verdict
 * and message stays Node's. The bound is counted here as there, chunk by chunk. That reading of success
 * needs a decoder that refuses anything after the member's end (Chromium's does); one that reads on
 * (Node's, past zero bytes) is found by a probe once, and then not used for this.
 */
export async function inflateEntryNative(
  compressed: Uint8Array,
  maxOutputLength: number,
  sizeHint: number,
  crc32: number,
): Promise<Buffer | CheckedOutput> {
  // Data that did not compress (a scan's image) is a long run of stored blocks: their payloads are copied
  // from the archive straight into the output and the core sums the CRC-32, one copy and one pass, where
  // the decoder makes two copies (into its 16 KB output chunks, then into one buffer) and hands over each
  // chunk on its own.
  if (storedRunPayload(compressed) >= STORED_DIRECT) {
    return inflateRawSync(compressed, { maxOutputLength, chunkSize: sizeHint });
  }
  if (await gzipEndsStrictly()) {
    const trailer = new Uint8Array(8);
    const view = new DataView(trailer.buffer);
    view.setUint32(0, crc32 >>> 0, true);
    view.setUint32(4, sizeHint >>> 0, true);
    try {
      const data = await inflateNative('gzip', compressed, maxOutputLength, sizeHint, GZIP_HEADER, trailer);
      return { data, crc32Checked: true };
    } catch (error) {
      if (error instanceof BufferTooLarge) throw error;
    }
  }
  return inflateRawNative(compressed, maxOutputLength, sizeHint);
}

let strictGzip: Promise<boolean> | undefined;

/**
 * Whether the gzip decoder refuses anything after a member's end: zero bytes (Node's reads past them as
 * padding), and a second member's opening bytes. Only such a decoder's success says that the member
 * ended exactly at the trailer given, so that the CRC-32 it checked is the entry's.
 */
export function gzipEndsStrictly(): Promise<boolean> {
  strictGzip ??= (async () => {
    if (typeof DecompressionStream === 'undefined') return false;
    // gzip of no bytes.
    const empty = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    for (const after of [[0, 0, 0, 0, 0, 0, 0, 0], empty.slice(0, 12)]) {
      try {
        await inflateNative('gzip', new Uint8Array([...empty, ...after]), 1024, 0);
        return false;
      } catch {
        // refused, as it should be
      }
    }
    return true;
  })();
  return strictGzip;
}

/** The same for a zlib stream (RFC 1950: header, Deflate, Adler-32), a PDF's FlateDecode data. */
export async function inflateZlibNative(compressed: Uint8Array, maxOutputLength: number): Promise<Buffer> {
  if (storedBlockAt(compressed, 2) || typeof DecompressionStream === 'undefined') {
    return inflateSync(compressed, { maxOutputLength });
  }
  try {
    return await inflateNative('deflate', compressed, maxOutputLength, 4 * compressed.length);
  } catch (error) {
    if (error instanceof BufferTooLarge) throw error;
    return inflateSync(compressed, { maxOutputLength });
  }
}

/** From this many bytes of stored blocks at an entry's head, they are copied rather than decoded. */
const STORED_DIRECT = 1024 * 1024;

/** The bytes the whole stored blocks at the head of raw Deflate data carry. */
function storedRunPayload(data: Uint8Array): number {
  let payload = 0;
  for (let at = 0, end = storedRunEnd(data, 0); at < end;) {
    const length = data[at + 1]! | (data[at + 2]! << 8);
    payload += length;
    at += 5 + length;
  }
  return payload;
}

const storedBlockAt = (data: Uint8Array, at: number): boolean => data.length > at && ((data[at]! >> 1) & 3) === 0;

/**
 * Where the run of whole stored blocks from `start` ends (RFC 1951, 3.2.4: a header byte, LEN, its
 * complement, LEN bytes; the next block starts on the byte after), `start` when there is none.
 */
function storedRunEnd(data: Uint8Array, start: number): number {
  let at = start;
  while (storedBlockAt(data, at) && at + 5 <= data.length) {
    const length = data[at + 1]! | (data[at + 2]! << 8);
    const complement = data[at + 3]! | (data[at + 4]! << 8);
    if ((length ^ complement) !== 0xffff || at + 5 + length > data.length) break;
    const final = (data[at]! & 1) === 1;
    at += 5 + length;
    if (final) break;
  }
  return at;
}

/**
 * `compressed` through the browser's decoder for `format`, the output counted chunk by chunk against
 * `max` (exported for its tests).
 */
export async function inflateNative(
  format: CompressionFormat,
  compressed: Uint8Array,
  max: number,
  sizeHint: number,
  header?: Uint8Array,
  trailer?: Uint8Array,
): Promise<Buffer> {
  const stream = new DecompressionStream(format);
  const writer = stream.writable.getWriter();
  const reader = stream.readable.getReader();
  // An entry's declared size, already checked against the limits: most fill it exactly, in one copy.
  let out = allocOutput(Math.min(sizeHint, max));
  let total = 0;
  let over = false;
  const reading = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      if (total + value.length > max) {
        over = true;
        throw new BufferTooLarge(`Cannot create a Buffer larger than ${max} bytes`);
      }
      if (total + value.length > out.length) {
        const grown = allocOutput(Math.min(max, Math.max(total + value.length, out.length * 2)));
        grown.set(out.subarray(0, total), 0);
        out = grown;
      }
      out.set(value, total);
      total += value.length;
    }
  })();
  // Stored blocks give no more output than their input: the run of them at the head of the data (a scan's
  // image) goes in as one slice, not in hundreds whose hand-offs cost more than the copy (F2 holds as ever,
  // the output counted chunk by chunk).
  const stored = storedRunEnd(compressed, format === 'deflate' ? 2 : 0);
  const writing = (async () => {
    if (header) void writer.write(header as Uint8Array<ArrayBuffer>).catch(() => undefined);
    for (let at = 0; at < compressed.length && !over;) {
      await writer.ready;
      if (over) break;
      const slice = at < stored ? stored - at : Math.max(MIN_SLICE, Math.floor((max - total) / MAX_RATIO));
      const end = Math.min(at + slice, compressed.length);
      void writer.write(compressed.subarray(at, end) as Uint8Array<ArrayBuffer>).catch(() => undefined);
      at = end;
    }
    if (trailer && !over) {
      await writer.ready;
      void writer.write(trailer as Uint8Array<ArrayBuffer>).catch(() => undefined);
    }
    if (!over) await writer.close();
  })();
  try {
    await Promise.all([reading, writing]);
  } catch (error) {
    await Promise.allSettled([reader.cancel(), writer.abort()]);
    throw error;
  }
  return total === out.length ? out : out.subarray(0, total);
}
