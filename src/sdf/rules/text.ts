/**
 * Text that PostgreSQL cannot store (text and jsonb refuse U+0000) or that is not Unicode at all (a
 * lone UTF-16 surrogate: jsonb refuses its escape, and JSON output would carry it to every client).
 */
export function isUnsafeText(value: string): boolean {
  // One pass over the code units, without a regular expression: most strings are short, and the call
  // into the regex engine cost more than the loop.
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit === 0) return true;
    if (unit < 0xd800 || unit > 0xdfff) continue;
    if (unit >= 0xdc00) return true; // a low surrogate whose high one was not just before it
    const next = value.charCodeAt(i + 1); // NaN past the end
    if (!(next >= 0xdc00 && next <= 0xdfff)) return true;
    i++;
  }
  return false;
}

const UNICODE_ESCAPE = Buffer.from('\\u', 'latin1');

/**
 * Whether a JSON text, once parsed from these bytes as UTF-8, could hold unsafe text at all. JSON.parse
 * refuses a raw U+0000 (a control character in a string, or outside one), and decoding turns bytes that
 * would encode a surrogate into U+FFFD, so both can only come from a `\u` escape; a text without the
 * two bytes `\u` anywhere needs no walk of its parsed tree. A `\\u` (an escaped backslash) only makes
 * the answer a cautious yes.
 */
export function jsonMayHoldUnsafeText(bytes: Buffer): boolean {
  return bytes.indexOf(UNICODE_ESCAPE) !== -1;
}

/** Why a string is refused, in words a client can act on. */
export function unsafeTextReason(value: string): string {
  return value.includes('\u0000')
    ? 'holds a NUL character (U+0000)'
    : 'holds a lone UTF-16 surrogate (not Unicode text)';
}

const escapePointer = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The JSON pointer of the first string (value or member name) in `value` that is unsafe text, with the
 * reason, or null. Walks with an explicit stack, never recursion, so no nesting can overflow it; the
 * callers bound the depth before (a parsed body, a JSON entry checked by its shape first).
 */
export function findUnsafeText(value: unknown): { path: string; reason: string } | null {
  // Almost every value is clean: a first walk builds no paths, the second runs only to name the culprit.
  return holdsUnsafeText(value) ? locateUnsafeText(value) : null;
}

/**
 * Whether any string or member name in `value` may be unsafe text: every string findUnsafeText looks
 * at (own enumerable members, array elements), visited without building a pointer for each.
 */
function holdsUnsafeText(value: unknown): boolean {
  if (typeof value === 'string') return isUnsafeText(value);
  if (typeof value !== 'object' || value === null) return false;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (Array.isArray(current)) {
      for (let i = 0; i < current.length; i++) {
        const child: unknown = current[i];
        if (typeof child === 'string') {
          if (isUnsafeText(child)) return true;
        } else if (typeof child === 'object' && child !== null) stack.push(child);
      }
      continue;
    }
    const record = current as Record<string, unknown>;
    // for-in allocates no key array. It also visits inherited enumerable members, which the walk that
    // names the culprit does not: such a find only costs that walk, which then answers null.
    for (const key in record) {
      if (isUnsafeText(key)) return true;
      const child = record[key];
      if (typeof child === 'string') {
        if (isUnsafeText(child)) return true;
      } else if (typeof child === 'object' && child !== null) stack.push(child);
    }
  }
  return false;
}

function locateUnsafeText(value: unknown): { path: string; reason: string } | null {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [current, path] = stack.pop()!;
    if (typeof current === 'string') {
      if (isUnsafeText(current)) return { path, reason: unsafeTextReason(current) };
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], `${path}/${i}`]);
    } else if (typeof current === 'object' && current !== null) {
      const entries = Object.entries(current as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        const childPath = `${path}/${escapePointer(key)}`;
        // A member name reaches the same places as its value (jsonb, JSON output, error paths).
        if (isUnsafeText(key)) return { path: childPath, reason: `member name ${unsafeTextReason(key)}` };
        stack.push([child, childPath]);
      }
    }
  }
  return null;
}
