import { randomBytes } from 'node:crypto';
import zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { allocOutput, dropSpares, offerSpares, SPARE_MIN_BYTES } from './spare-memory.js';
import { inflateRawSync } from './zlib.js';

const MB = SPARE_MIN_BYTES;

// Identity is checked as a boolean: a failing toBe on buffers of megabytes would print them whole.
describe('spare memory for inflated entries', () => {
  afterEach(() => dropSpares());

  it('takes the smallest spare that holds the size, each spare once', () => {
    const small = new ArrayBuffer(2 * MB);
    const large = new ArrayBuffer(3 * MB);
    offerSpares([large, small]);
    const first = allocOutput(2 * MB - 10);
    expect(first.buffer === small).toBe(true);
    expect([first.byteOffset, first.length]).toEqual([0, 2 * MB - 10]);
    const second = allocOutput(1.5 * MB);
    expect(second.buffer === large).toBe(true);
    // Both taken: the next is new memory.
    const third = allocOutput(1.5 * MB);
    expect(third.buffer === small || third.buffer === large).toBe(false);
  });

  it('leaves a spare more than twice the size alone (a small entry would keep it alive)', () => {
    const large = new ArrayBuffer(5 * MB);
    offerSpares([large]);
    expect(allocOutput(2 * MB).buffer === large).toBe(false);
    expect(allocOutput(2.5 * MB).buffer === large).toBe(true);
  });

  it('leaves small sizes and small spares alone, and forgets what was not taken', () => {
    const tooSmall = new ArrayBuffer(MB - 1);
    const spare = new ArrayBuffer(3 * MB);
    offerSpares([tooSmall, spare]);
    expect(allocOutput(1000).buffer === spare).toBe(false);
    expect(allocOutput(MB - 1).buffer === tooSmall).toBe(false);
    expect(allocOutput(4 * MB).buffer === spare).toBe(false);
    dropSpares();
    expect(allocOutput(2 * MB).buffer === spare).toBe(false);
  });

  it('an entry inflated into a spare holding an earlier file is exactly its own bytes', () => {
    // Stored blocks (noise does not compress), then compressed ones: both paths of the adapter.
    const data = Buffer.concat([randomBytes(1.5 * MB), Buffer.from('text '.repeat(100_000))]);
    const compressed = zlib.deflateRawSync(data);
    const spare = new ArrayBuffer(3 * MB);
    new Uint8Array(spare).fill(0xaa);
    offerSpares([spare]);
    const out = inflateRawSync(compressed, { maxOutputLength: 8 * MB, chunkSize: data.length });
    expect(out.buffer === spare).toBe(true);
    expect(out.length).toBe(data.length);
    expect(Buffer.compare(out, data)).toBe(0);
  });
});
