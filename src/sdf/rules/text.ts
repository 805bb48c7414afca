/**
 * Text that PostgreSQL cannot store (text and jsonb refuse U+0000) or that is not Unicode at all (a
 * lone UTF-16 surrogate: jsonb refuses its escape, and JSON output would carry it to every client).
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function isUnsafeText(value: string): boolean {
  return value.includes('\u0000') || LONE_SURROGATE.test(value);
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
