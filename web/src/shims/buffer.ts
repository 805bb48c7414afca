/**
 * Node's Buffer for the format core in the browser: the `buffer` package, with the encodings it lacks
 * (`base64url`, used by JWS) and text decoding through the browser's own TextDecoder/TextEncoder,
 * which are many times faster on a large data.json than a decoder written in JavaScript.
 */
import { Buffer } from 'buffer';
import { simdSearch, type Search } from './simd-search.js';

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
 * Comparing bytes: the package's `compare` and `equals` first copy both operands into new Buffers (its
 * test for a plain Uint8Array also holds for its own Buffers); these compare the views in place.
 */
function compareBytes(a: Uint8Array, b: Uint8Array): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

(Buffer as unknown as { compare: (a: unknown, b: unknown) => number }).compare = (a: unknown, b: unknown) => {
  if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array))
    throw new TypeError('The "buf1", "buf2" arguments must be one of type Buffer or Uint8Array');
  return compareBytes(a, b);
};

(proto as unknown as { equals: unknown }).equals = function equals(this: Uint8Array, other: unknown): boolean {
  if (!(other instanceof Uint8Array)) throw new TypeError('Argument must be a Buffer');
  return this.length === other.length && compareBytes(this, other) === 0;
};

/**
 * Searching for a byte sequence: the package compares byte by byte in JavaScript; this jumps between
 * candidates with the typed array's native search for the first byte, and past the first few KB, where
 * the validation worker has enabled it, goes on with the SIMD search (the PDF checks search a 20 MB scan
 * for `obj` and `endstream`; see simd-search.ts).
 */
const nativeIndexOf = Uint8Array.prototype.indexOf;
/** Bytes searched by the first-byte jumps before the SIMD search takes over (its slices are 64 KB). */
const NEAR = 4096;
let longSearch: Search | null = null;

/**
 * Lets Buffer#indexOf use the SIMD search for long haystacks. Only where WebAssembly may be compiled (the
 * validation worker's policy allows it; a page's does not); answers whether it is in use.
 */
export function enableSimdSearch(): boolean {
  longSearch ??= simdSearch();
  return longSearch !== null;
}

/** The first index in [from, lastStart] where `needle` (not empty) starts in `haystack`, else -1. */
function jumpSearch(haystack: Uint8Array, needle: Uint8Array, from: number, lastStart: number): number {
  const first = needle[0]!;
  while (from <= lastStart) {
    const at = nativeIndexOf.call(haystack, first, from);
    if (at === -1 || at > lastStart) return -1;
    let k = 1;
    while (k < needle.length && haystack[at + k] === needle[k]) k++;
    if (k === needle.length) return at;
    from = at + 1;
  }
  return -1;
}

(proto as unknown as { indexOf: unknown }).indexOf = function indexOf(
  this: Uint8Array,
  value: number | string | Uint8Array,
  byteOffset = 0,
  encoding?: BufferEncoding,
): number {
  const from = byteOffset < 0 ? Math.max(0, this.length + byteOffset) : byteOffset;
  if (typeof value === 'number') return nativeIndexOf.call(this, value & 0xff, from);
  const needle = typeof value === 'string' ? Buffer.from(value, encoding ?? 'utf8') : value;
  if (needle.length === 0) return Math.min(from, this.length);
  const lastStart = this.length - needle.length;
  if (longSearch === null || needle.length < 2 || needle.length > 256 || lastStart - from < 2 * NEAR) {
    return jumpSearch(this, needle, from, lastStart);
  }
  // The near bytes first: a search that ends close by (the next object's `obj`) copies nothing.
  const near = jumpSearch(this, needle, from, from + NEAR - 1);
  return near >= 0 ? near : longSearch(this, needle, from + NEAR);
};

(globalThis as unknown as { Buffer: typeof Buffer }).Buffer = Buffer;

export { Buffer };
