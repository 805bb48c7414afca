import { randomBytes } from 'node:crypto';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { deflateBomb } from '../../../src/sdf/testing/zip-builder.js';
import { crc32, inflateRawSync, inflateSync } from './zlib.js';

/** The browser's inflate and CRC must answer as Node's zlib does, bytes and refusals alike. */
const text = Buffer.from(JSON.stringify(Array.from({ length: 5000 }, (_, i) => ({ line: i, text: 'valve DN50' }))));
const noise = randomBytes(300_000);
const samples: [string, Buffer][] = [
  ['compressible text', text],
  ['incompressible noise (stored blocks)', noise],
  [
    'noise then text (stored, then compressed blocks referring back)',
    Buffer.concat([noise, text, noise.subarray(0, 1000)]),
  ],
  ['empty', Buffer.alloc(0)],
];

function outcome(fn: () => Buffer): { bytes?: string; code?: string; failed?: boolean } {
  try {
    return { bytes: fn().toString('base64') };
  } catch (error) {
    const code = (error as { code?: string }).code;
    return code === 'ERR_BUFFER_TOO_LARGE' ? { code } : { failed: true };
  }
}

describe('browser zlib adapter', () => {
  it.each(samples)('inflates raw Deflate of %s exactly as zlib', (_label, data) => {
    for (const level of [0, 1, 6, 9]) {
      const compressed = zlib.deflateRawSync(data, { level });
      expect(outcome(() => inflateRawSync(compressed))).toEqual(outcome(() => zlib.inflateRawSync(compressed)));
    }
  });

  it.each(samples)('inflates zlib-wrapped %s exactly as zlib, and refuses a wrong Adler-32 as it does', (_l, data) => {
    for (const level of [0, 1, 6]) {
      const compressed = zlib.deflateSync(data, { level });
      expect(outcome(() => inflateSync(compressed))).toEqual(outcome(() => zlib.inflateSync(compressed)));
      const corrupt = Buffer.from(compressed);
      corrupt[corrupt.length - 1]! ^= 0xff;
      expect(outcome(() => inflateSync(corrupt))).toEqual({ failed: true });
      expect(outcome(() => zlib.inflateSync(corrupt))).toEqual({ failed: true });
    }
  });

  it('stops a bomb at the output bound with the code zlib uses, stored and compressed', () => {
    const bomb = deflateBomb(64);
    const max = 1024 * 1024;
    expect(outcome(() => inflateRawSync(bomb, { maxOutputLength: max }))).toEqual({ code: 'ERR_BUFFER_TOO_LARGE' });
    expect(outcome(() => zlib.inflateRawSync(bomb, { maxOutputLength: max }))).toEqual({
      code: 'ERR_BUFFER_TOO_LARGE',
    });
    const stored = zlib.deflateRawSync(randomBytes(2 * max), { level: 0 });
    expect(outcome(() => inflateRawSync(stored, { maxOutputLength: max }))).toEqual({ code: 'ERR_BUFFER_TOO_LARGE' });
    expect(outcome(() => zlib.inflateRawSync(stored, { maxOutputLength: max }))).toEqual({
      code: 'ERR_BUFFER_TOO_LARGE',
    });
  });

  it('refuses a cut stream as zlib does', () => {
    for (const data of [text, noise]) {
      const cut = zlib.deflateRawSync(data).subarray(0, 1000);
      expect(outcome(() => inflateRawSync(cut))).toEqual({ failed: true });
      expect(outcome(() => zlib.inflateRawSync(cut))).toEqual({ failed: true });
    }
  });

  it('computes CRC-32 as zlib does, whatever the length and alignment', () => {
    for (const length of [0, 1, 7, 8, 9, 15, 16, 17, 19, 20, 31, 63, 1000, 65_537]) {
      const data = randomBytes(length + 3);
      for (const offset of [0, 1, 2, 3]) {
        const view = data.subarray(offset, offset + length);
        expect(crc32(view)).toBe(zlib.crc32(view));
      }
    }
  });
});
