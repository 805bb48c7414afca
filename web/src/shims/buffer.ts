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

(globalThis as unknown as { Buffer: typeof Buffer }).Buffer = Buffer;

export { Buffer };
