import { Buffer as NodeBuffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { Buffer as Shim, enableSimdSearch } from './buffer.js';
import { simdSearch } from './simd-search.js';

// Importing the adapter sets the global Buffer, as the browser needs: Node's is put back for the files after this.
afterAll(() => {
  globalThis.Buffer = NodeBuffer;
});

/** The browser's searches must find what Node's Buffer#indexOf finds. */
const search = simdSearch();
const latin1 = (text: string): Uint8Array => new Uint8Array(NodeBuffer.from(text, 'latin1'));
const PIECES = ['endstream', 'endstre', 'endstrea', 'obj', 'ob', 'bj', 'o j', 'e', 'm', ' ', '\n'];
const haystacks = fc
  .array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ maxLength: 40 })), { maxLength: 60 })
  .map((parts) => latin1(parts.join('')));
const needles = fc.oneof(
  fc.constantFrom('endstream', 'endstre', 'obj', 'ob', 'o j', 'mm'),
  fc.string({ minLength: 2, maxLength: 12 }),
);

describe('SIMD search', () => {
  it('compiles here (Node has WebAssembly SIMD, as every browser the reader supports)', () => {
    expect(search).not.toBeNull();
  });

  it('finds what Buffer#indexOf finds, from any offset', () => {
    fc.assert(
      fc.property(haystacks, needles, fc.nat(300), (haystack, needleText, from) => {
        const needle = latin1(needleText);
        if (needle.length < 2) return;
        expect(search!(haystack, needle, from)).toBe(NodeBuffer.from(haystack).indexOf(needle, from));
      }),
      { numRuns: 3000 },
    );
  });

  it('finds a needle cut by the edge of a 64 KB slice, at the end, or not at all', () => {
    const needle = latin1('endstream');
    for (const at of [0, 1, 65535 - 8, 65535 - 4, 65536 - 1, 65536, 2 * 65536 - 9, 300_000 - 9]) {
      const haystack = new Uint8Array(randomBytes(300_000));
      // Random bytes may hold the needle's first and last bytes a needle apart, never the needle itself.
      haystack.set(needle, at);
      expect(search!(haystack, needle, 0)).toBe(NodeBuffer.from(haystack).indexOf(needle));
      expect(search!(haystack, needle, at + 1)).toBe(NodeBuffer.from(haystack).indexOf(needle, at + 1));
    }
    const view = new Uint8Array(randomBytes(200_001)).subarray(7, 200_000);
    expect(search!(view, needle, 0)).toBe(NodeBuffer.from(view).indexOf(needle));
  });
});

describe('Buffer#indexOf of the browser adapter, with the SIMD search enabled', () => {
  it('answers as Node does on long haystacks, near hits and far ones', () => {
    expect(enableSimdSearch()).toBe(true);
    const noise = randomBytes(150_000);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(noise.length - 1), fc.constantFrom('obj', 'endstream', 'endstre')), { maxLength: 6 }),
        fc.constantFrom('obj', 'endstream', 'endstre', 'ob'),
        fc.integer({ min: -200, max: noise.length + 10 }),
        (plants, needleText, from) => {
          const bytes = NodeBuffer.from(noise);
          for (const [at, text] of plants) bytes.write(text, Math.min(at, bytes.length - text.length), 'latin1');
          const adapted = Shim.from(bytes);
          const needle = NodeBuffer.from(needleText, 'latin1');
          expect(adapted.indexOf(needle, from)).toBe(bytes.indexOf(needle, from));
          expect(adapted.indexOf(needleText, from, 'latin1')).toBe(bytes.indexOf(needleText, from, 'latin1'));
        },
      ),
      { numRuns: 300 },
    );
  });
});
