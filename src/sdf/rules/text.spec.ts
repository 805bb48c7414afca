import { describe, expect, it } from 'vitest';
import { findUnsafeText, isUnsafeText } from './text.js';

describe('unsafe text', () => {
  it('refuses NUL and lone surrogates, accepts paired surrogates', () => {
    expect(isUnsafeText('a\u0000b')).toBe(true);
    expect(isUnsafeText('\ud800')).toBe(true);
    expect(isUnsafeText('x\udc00')).toBe(true);
    expect(isUnsafeText('\ud83d\ude00 ok')).toBe(false);
    expect(isUnsafeText('plain ü €')).toBe(false);
  });

  it('names the first unsafe string or member name by JSON pointer', () => {
    expect(findUnsafeText({ a: [1, 'ok', { 'b/c': 'x\u0000' }] })).toEqual({
      path: '/a/2/b~1c',
      reason: 'holds a NUL character (U+0000)',
    });
    expect(findUnsafeText({ ['k\ud800']: 1 })?.path).toBe('/k\ud800');
    expect(findUnsafeText({ a: ['fine'] })).toBeNull();
  });

  it('walks 100,000 levels without recursion', () => {
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(findUnsafeText(deep)?.reason).toContain('NUL');
  });
});
