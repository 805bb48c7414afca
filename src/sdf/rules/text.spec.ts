import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findUnsafeText, isUnsafeText, jsonMayHoldUnsafeText } from './text.js';

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

  it('judges a string as the regular expressions it replaced did', () => {
    const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
    const units = fc.oneof(
      fc.constantFrom(0, 0x41, 0xe9, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xd83d, 0xde00),
      fc.integer({ min: 0, max: 0xffff }),
    );
    fc.assert(
      fc.property(fc.array(units, { maxLength: 8 }), (codes) => {
        const text = String.fromCharCode(...codes);
        expect(isUnsafeText(text)).toBe(text.includes('\u0000') || lone.test(text));
      }),
      { numRuns: 5_000 },
    );
  });

  it('finds unsafe text in a parsed JSON text only when its bytes hold a \\u escape', () => {
    expect(jsonMayHoldUnsafeText(Buffer.from('{"a":"x\\u0000"}'))).toBe(true);
    expect(jsonMayHoldUnsafeText(Buffer.from('{"a":"plain ü €"}'))).toBe(false);
    // Bytes that would encode a surrogate decode to U+FFFD, never to a lone surrogate.
    const encodedSurrogate = Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]);
    expect(jsonMayHoldUnsafeText(encodedSurrogate)).toBe(false);
    expect(findUnsafeText(JSON.parse(encodedSurrogate.toString('utf8')))).toBeNull();
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('\u0000', '\ud800x', 'x\udc00')),
        (value, text) => {
          const bytes = Buffer.from(JSON.stringify([value, { [text]: text }]), 'utf8');
          const parsed: unknown = JSON.parse(bytes.toString('utf8'));
          if (findUnsafeText(parsed) !== null) expect(jsonMayHoldUnsafeText(bytes)).toBe(true);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
