import { afterAll, describe, expect, it } from 'vitest';

// The shim sets the global Buffer for the browser: kept aside here and put back for the files after this.
const nodeBuffer = globalThis.Buffer;
const { Buffer: Shim } = await import('./buffer.js');
afterAll(() => {
  globalThis.Buffer = nodeBuffer;
});

/** Pairs of byte strings, as the format core compares them (entry names, their canonical order). */
const pairs: [number[], number[]][] = [
  [[], []],
  [[1], []],
  [[], [1]],
  [
    [1, 2, 3],
    [1, 2, 3],
  ],
  [
    [1, 2, 3],
    [1, 2, 4],
  ],
  [
    [1, 2, 4],
    [1, 2, 3],
  ],
  [
    [1, 2],
    [1, 2, 0],
  ],
  [[0xff], [0x00]],
  [
    [0x61, 0x62],
    [0x61, 0x62],
  ],
];

describe('the browser Buffer: compare and equals', () => {
  it.each(pairs)('answer as Node does for %j and %j, on Buffers, views and plain Uint8Arrays', (a, b) => {
    const expected = nodeBuffer.compare(nodeBuffer.from(a), nodeBuffer.from(b));
    const wide = Shim.from([9, ...a, 9]);
    const view = wide.subarray(1, 1 + a.length);
    for (const left of [Shim.from(a), view]) {
      for (const right of [Shim.from(b), new Uint8Array(b)]) {
        expect(Shim.compare(left, right)).toBe(expected);
        expect(left.equals(right)).toBe(expected === 0);
      }
    }
  });

  it('refuses what is not bytes, as the package does', () => {
    expect(() => Shim.compare(Shim.from([1]), 'a' as unknown as Uint8Array)).toThrow(TypeError);
    expect(() => Shim.from([1]).equals([1] as unknown as Uint8Array)).toThrow(TypeError);
  });
});
