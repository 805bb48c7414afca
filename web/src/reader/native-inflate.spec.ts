import { randomBytes } from 'node:crypto';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { deflateBomb } from '../../../src/sdf/testing/zip-builder.js';
import '../shims/buffer.js';
import { inflateRawNative } from './native-inflate.js';

/** Node has DecompressionStream too: the counting, the bound and the fall-backs run here as in the worker. */
const text = Buffer.from(JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ line: i, text: 'valve DN50' }))));

async function outcome(run: () => Promise<Uint8Array>): Promise<{ bytes?: string; code?: string; failed?: boolean }> {
  try {
    return { bytes: Buffer.from(await run()).toString('base64') };
  } catch (error) {
    const code = (error as { code?: string }).code;
    return code === 'ERR_BUFFER_TOO_LARGE' ? { code } : { failed: true };
  }
}

const node = (compressed: Buffer, max: number) => () =>
  Promise.resolve(zlib.inflateRawSync(compressed, { maxOutputLength: max }));

describe('native inflate for the reader', () => {
  it('inflates as zlib does, whatever the size hint says', async () => {
    for (const data of [text, randomBytes(100_000), Buffer.concat([randomBytes(70_000), text]), Buffer.alloc(0)]) {
      for (const level of [0, 1, 9]) {
        const compressed = zlib.deflateRawSync(data, { level });
        const max = data.length + 1;
        const expected = await outcome(node(compressed, max));
        for (const hint of [data.length, 0, Math.floor(data.length / 3)]) {
          expect(await outcome(() => inflateRawNative(compressed, max, hint))).toEqual(expected);
        }
      }
    }
  });

  it('stops at the bound with the code zlib uses, before a bomb is inflated', async () => {
    const bomb = deflateBomb(64);
    const max = 1024 * 1024;
    expect(await outcome(() => inflateRawNative(bomb, max, 0))).toEqual({ code: 'ERR_BUFFER_TOO_LARGE' });
    const compressed = zlib.deflateRawSync(text);
    expect(await outcome(() => inflateRawNative(compressed, text.length - 1, text.length))).toEqual({
      code: 'ERR_BUFFER_TOO_LARGE',
    });
    expect(await outcome(() => inflateRawNative(compressed, text.length, text.length))).toEqual({
      bytes: text.toString('base64'),
    });
  });

  it('refuses what zlib refuses: a cut stream, data that is not Deflate', async () => {
    const cut = zlib.deflateRawSync(text).subarray(0, 1000);
    const junk = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x00, 0x12]);
    for (const compressed of [cut, junk]) {
      expect(await outcome(() => inflateRawNative(compressed, 1 << 24, 0))).toEqual({ failed: true });
      expect(await outcome(node(compressed, 1 << 24))).toEqual({ failed: true });
    }
  });

  it('answers as zlib does on bytes after the end of the data', async () => {
    const compressed = Buffer.concat([zlib.deflateRawSync(text), Buffer.from('trailing bytes')]);
    expect(await outcome(() => inflateRawNative(compressed, 1 << 24, text.length))).toEqual(
      await outcome(node(compressed, 1 << 24)),
    );
  });
});
