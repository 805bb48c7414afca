import { SdfError, type SdfErrorCode } from '../errors.js';
import type { Limits } from '../limits.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/**
 * Safety budget, before JSON.parse: counts the nesting depth and an upper bound of the values of a
 * JSON text in one pass over its bytes, outside strings, without allocating. JSON.parse would build
 * the whole tree before any rule could look at it, so a file of `[{},{},...]` would spend the worker's
 * heap first; refusing it here keeps the memory budget of the pool a last resort (F2, F6).
 * Invalid JSON is left for JSON.parse to report.
 */
export function checkJsonShape(
  bytes: Buffer,
  file: string,
  limits: Pick<Limits, 'maxJsonDepth' | 'maxJsonValues'>,
  deepCode: SdfErrorCode,
): void {
  let depth = 0;
  // Every value is either the root, the first member of a container, or follows a comma.
  let values = 1;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const byte = bytes[i]!;
    if (byte === QUOTE) {
      // Skip the string; indexOf is native and much faster than a byte loop on long strings.
      let end = i;
      do {
        end = bytes.indexOf(QUOTE, end + 1);
        if (end < 0) return;
      } while (isEscaped(bytes, end));
      i = end;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > limits.maxJsonDepth) throw tooDeep(file, limits.maxJsonDepth, deepCode);
      values++;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
    } else if (byte === COMMA && ++values > limits.maxJsonValues) {
      const message = `${file} holds more than ${limits.maxJsonValues} values`;
      throw new SdfError('SDF_ERROR_ARCHIVE_TOO_LARGE', message, file, [{ path: '', message }]);
    }
  }
}

/**
 * Whether `checkJsonShape` must run before JSON.parse. A text holds at most one value per byte plus
 * one (each value past the first follows a comma or an opening bracket), so a text shorter than
 * `maxJsonValues` bytes cannot pass the count, and what JSON.parse builds from it stays within a small
 * multiple of its size. Such a text is parsed directly and its depth is checked on the tree (the F5
 * walk over data.json does it, with the same error).
 */
export function needsShapeCheck(bytes: Buffer, limits: Pick<Limits, 'maxJsonValues'>): boolean {
  return bytes.length >= limits.maxJsonValues;
}

export function tooDeep(file: string, maxDepth: number, code: SdfErrorCode): SdfError {
  const message = `${file} nests deeper than ${maxDepth} levels`;
  return new SdfError(code, message, file, [{ path: '', message }]);
}

/** A quote is escaped when an odd number of backslashes precede it. */
function isEscaped(bytes: Buffer, quote: number): boolean {
  let count = 0;
  for (let i = quote - 1; i >= 0 && bytes[i] === BACKSLASH; i--) count++;
  return count % 2 === 1;
}
