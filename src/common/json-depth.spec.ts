import { describe, expect, it } from 'vitest';
import { jsonDepthExceeds } from './json-depth.js';

const b = (s: string) => Buffer.from(s);

describe('jsonDepthExceeds', () => {
  it('counts objects and arrays', () => {
    expect(jsonDepthExceeds(b('{"a":[{"b":[]}]}'), 4)).toBe(false);
    expect(jsonDepthExceeds(b('{"a":[{"b":[]}]}'), 3)).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(jsonDepthExceeds(b('{"a":"[[[[{{{{\\"[[[["}'), 1)).toBe(false);
    expect(jsonDepthExceeds(b('["\\\\",[[]]]'), 2)).toBe(true);
  });
});
