/**
 * Node's Buffer for the format core in the browser: the `buffer` package, with the encodings it lacks
 * (`base64url`, used by JWS) and text decoding through the browser's own TextDecoder/TextEncoder,
 * which are many times faster on a large data.json than a decoder written in JavaScript.
 */
import { Buffer } from 'buffer';

type BufferEncoding = 'utf8' | 'utf-8' | 'latin1' | 'binary' | 'hex' | 'base64' | 'base64url' | 'ascii';

const utf8Decoder = new TextDecoder('utf-8');
const utf8Encoder = new TextEncoder();
const proto = Buffer.prototype as unknown as {
  toString(this: Uint8Array, encoding?: string, start?: number, end?: number): string;
};
const baseToString = proto.toString;
const baseFrom = Buffer.from.bind(Buffer) as (...args: unknown[]) => Buffer;

proto.toString = function toString(this: Uint8Array, encoding?: string, start?: number, end?: number): string {
  const view = start !== undefined || end !== undefined ? this.subarray(start ?? 0, end ?? this.length) : this;
  if (encoding === undefined || encoding === 'utf8' || encoding === 'utf-8') return utf8Decoder.decode(view);
  if (encoding === 'base64url') {
    return baseToString.call(view, 'base64').replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  }
  return baseToString.call(view, encoding);
};

(Buffer as unknown as { from: (...args: unknown[]) => Buffer }).from = (...args: unknown[]) => {
  const [value, encoding] = args as [unknown, BufferEncoding | undefined];
  if (typeof value === 'string') {
    if (encoding === undefined || encoding === 'utf8' || encoding === 'utf-8') {
      const bytes = utf8Encoder.encode(value);
      return baseFrom(bytes.buffer, bytes.byteOffset, bytes.length);
    }
    if (encoding === 'base64url') return baseFrom(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  }
  // Everything else as the package does it, every argument passed on (`from(arrayBuffer, offset, length)`).
  return baseFrom(...args);
};

/**
 * Searching for a byte sequence: the package compares byte by byte in JavaScript; this jumps between
 * candidates with the typed array's native search for the first byte (the PDF checks search a 20 MB
 * scan for `obj` and `endstream`).
 */
const nativeIndexOf = Uint8Array.prototype.indexOf;
(proto as unknown as { indexOf: unknown }).indexOf = function indexOf(
  this: Uint8Array,
  value: number | string | Uint8Array,
  byteOffset = 0,
  encoding?: BufferEncoding,
): number {
  let from = byteOffset < 0 ? Math.max(0, this.length + byteOffset) : byteOffset;
  if (typeof value === 'number') return nativeIndexOf.call(this, value & 0xff, from);
  const needle = typeof value === 'string' ? Buffer.from(value, encoding ?? 'utf8') : value;
  if (needle.length === 0) return Math.min(from, this.length);
  const first = needle[0]!;
  const last = this.length - needle.length;
  while (from <= last) {
    const at = nativeIndexOf.call(this, first, from);
    if (at === -1 || at > last) return -1;
    let k = 1;
    while (k < needle.length && this[at + k] === needle[k]) k++;
    if (k === needle.length) return at;
    from = at + 1;
  }
  return -1;
};

(globalThis as unknown as { Buffer: typeof Buffer }).Buffer = Buffer;

export { Buffer };
