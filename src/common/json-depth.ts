/**
 * Nesting deeper than any legitimate request body. Validation (class-transformer) walks a body
 * recursively, so a small but deeply nested body would otherwise overflow the stack (a 500).
 */
export const MAX_JSON_BODY_DEPTH = 100;

/** Deepest `{`/`[` nesting of JSON text, found in one pass over the bytes (strings skipped). */
export function jsonDepthExceeds(bytes: Buffer, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** Error raised from the JSON parser's `verify` hook; the exception filter answers 400 VALIDATION_ERROR. */
export class JsonTooDeepError extends Error {
  readonly status = 400;
  readonly expose = true;
  readonly type = 'entity.too.deep';

  constructor(limit: number) {
    super(`Request body is nested deeper than ${limit} levels`);
  }
}
