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
    return inflateRawSync(compressed, { maxOutputLength });
  }
  try {
    return await inflateNative('deflate-raw', compressed, maxOutputLength, sizeHint);
  } catch (error) {
    if (error instanceof BufferTooLarge) throw error;
    return inflateRawSync(compressed, { maxOutputLength });
  }
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

const storedBlockAt = (data: Uint8Array, at: number): boolean => data.length > at && ((data[at]! >> 1) & 3) === 0;

async function inflateNative(
  format: CompressionFormat,
  compressed: Uint8Array,
  max: number,
  sizeHint: number,
): Promise<Buffer> {
  const stream = new DecompressionStream(format);
  const writer = stream.writable.getWriter();
  const reader = stream.readable.getReader();
  // An entry's declared size, already checked against the limits: most fill it exactly, in one copy.
  let out = Buffer.allocUnsafe(Math.min(sizeHint, max));
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
        const grown = Buffer.allocUnsafe(Math.min(max, Math.max(total + value.length, out.length * 2)));
        grown.set(out.subarray(0, total), 0);
        out = grown;
      }
      out.set(value, total);
      total += value.length;
    }
  })();
  const writing = (async () => {
    for (let at = 0; at < compressed.length && !over;) {
      await writer.ready;
      if (over) break;
      const slice = Math.max(MIN_SLICE, Math.floor((max - total) / MAX_RATIO));
      const end = Math.min(at + slice, compressed.length);
      void writer.write(compressed.subarray(at, end) as Uint8Array<ArrayBuffer>).catch(() => undefined);
      at = end;
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
