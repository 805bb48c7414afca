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

export function inflateRawSync(input: Uint8Array, options?: InflateOptions): Buffer {
  return run(new Inflate(), input, options);
}

export function inflateSync(input: Uint8Array, options?: InflateOptions): Buffer {
  return run(new Unzlib(), input, options);
}

export default { inflateRawSync, inflateSync };
