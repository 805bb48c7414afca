import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { byteSearch } from './byte-search.js';

const ENDSTREAM = Buffer.from('endstream', 'latin1');

describe('byteSearch', () => {
  it('finds what Buffer#indexOf finds, from any offset, whole needles, near misses and cut-off ends alike', () => {
    const pieces = ['endstream', 'endstre', 'endstrea', 'endstreamendstream', 'xendstreax', 'obj', 'e', ' '];
    const search = byteSearch(ENDSTREAM);
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 6 })), { maxLength: 40 }),
        fc.nat(400),
        (parts, from) => {
          const haystack = Buffer.from(parts.join(''), 'latin1');
          expect(search(haystack, from)).toBe(haystack.indexOf(ENDSTREAM, from));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('short needles are searched as they are', () => {
    const haystack = Buffer.from('1 0 obj << >> endobj 2 0 obj', 'latin1');
    expect(byteSearch(Buffer.from('obj'))(haystack, 0)).toBe(4);
    expect(byteSearch(Buffer.from('obj'))(haystack, 5)).toBe(17);
  });

  it('past many near misses it still finds the needle (left to Buffer#indexOf for the rest)', () => {
    const misses = Buffer.from('endstreaX'.repeat(1000), 'latin1');
    const haystack = Buffer.concat([misses, randomBytes(100), ENDSTREAM, randomBytes(10)]);
    expect(byteSearch(ENDSTREAM)(haystack, 0)).toBe(haystack.indexOf(ENDSTREAM));
    expect(byteSearch(ENDSTREAM)(haystack, haystack.length - 5)).toBe(-1);
  });
});
