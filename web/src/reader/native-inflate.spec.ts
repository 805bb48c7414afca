import { randomBytes } from 'node:crypto';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { deflateBomb } from '../../../src/sdf/testing/zip-builder.js';
import '../shims/buffer.js';
import { gzipEndsStrictly, inflateEntryNative, inflateNative, inflateRawNative } from './native-inflate.js';

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

  it('takes a run of stored blocks in one piece and still counts its output against the bound', async () => {
    const noise = randomBytes(300_000);
    // Stored blocks (not final: a sync flush), then a bomb's compressed blocks, then the same noise alone.
    const storedHead = zlib.deflateRawSync(noise, { level: 0, finishFlush: zlib.constants.Z_SYNC_FLUSH });
    const bomb = Buffer.concat([storedHead, deflateBomb(64)]);
    const mixed = Buffer.concat([storedHead, zlib.deflateRawSync(text)]);
    const stored = zlib.deflateRawSync(noise, { level: 0 });
    const cases: [Buffer, number][] = [
      [bomb, 4 * 1024 * 1024],
      [mixed, noise.length + text.length],
      [mixed, noise.length + text.length - 1],
      [stored, noise.length],
      [stored, noise.length - 1],
      [stored.subarray(0, 100_000), noise.length],
    ];
    for (const [compressed, max] of cases) {
      expect(await outcome(() => inflateNative('deflate-raw', compressed, max, 0))).toEqual(
        await outcome(node(compressed, max)),
      );
    }
  });

  describe('an archive entry with its CRC-32 checked by the gzip decoder', () => {
    const entry = async (compressed: Buffer, max: number, size: number, crc: number) => {
      try {
        const out = await inflateEntryNative(compressed, max, size, crc);
        const data = out instanceof Uint8Array ? out : out.data;
        const checked = !(out instanceof Uint8Array) && out.crc32Checked;
        return { bytes: Buffer.from(data).toString('base64'), checked };
      } catch (error) {
        const code = (error as { code?: string }).code;
        return code === 'ERR_BUFFER_TOO_LARGE' ? { code } : { failed: true };
      }
    };

    it("is not used on Node's gzip decoder, which reads on past zero bytes after a member", async () => {
      // Chromium's refuses them (the reader's end-to-end test runs the whole corpus through it there).
      expect(await gzipEndsStrictly()).toBe(false);
      const compressed = zlib.deflateRawSync(text);
      expect(await entry(compressed, 1 << 24, text.length, zlib.crc32(text))).toEqual({
        bytes: text.toString('base64'),
        checked: false,
      });
    });

    it('answers checked only when the output is the entry: its CRC-32 and size, the data ending where it does', async () => {
      const strict = await gzipEndsStrictly();
      for (const data of [text, randomBytes(200_000), Buffer.alloc(0)]) {
        for (const level of [0, 6]) {
          const compressed = zlib.deflateRawSync(data, { level });
          const crc = zlib.crc32(data);
          const bytes = data.toString('base64');
          const max = data.length + 1;
          expect(await entry(compressed, max, data.length, crc)).toEqual({ bytes, checked: strict });
          // A CRC-32 or size that is not the output's: inflated again, the sum left to the core.
          expect(await entry(compressed, max, data.length, crc ^ 1)).toEqual({ bytes, checked: false });
          expect(await entry(compressed, max, data.length + 1, crc)).toEqual({ bytes, checked: false });
          // Bytes after the end of the data, even the output's own trailer: as zlib answers, not checked.
          const trailer = Buffer.alloc(8);
          trailer.writeUInt32LE(crc, 0);
          trailer.writeUInt32LE(data.length, 4);
          for (const extra of [Buffer.from('trailing bytes'), trailer]) {
            const longer = Buffer.concat([compressed, extra]);
            const expected = await outcome(node(longer, max));
            const got = await entry(longer, max, data.length, crc);
            expect(got.checked ?? false).toBe(false);
            expect(got.bytes === undefined ? { failed: true } : { bytes: got.bytes }).toEqual(expected);
          }
        }
      }
    });

    it("copies a long stored head (a scan's image) and leaves the CRC-32 to the core, answering as zlib does", async () => {
      const image = randomBytes(1_300_000);
      const storedHead = zlib.deflateRawSync(image, { level: 0, finishFlush: zlib.constants.Z_SYNC_FLUSH });
      // The image alone; the image with compressed text after it (whose matches may reach back into the
      // image); the same with bytes after the end; the image followed by a bomb; a stream cut short.
      const whole = zlib.deflateRawSync(image, { level: 0 });
      // The text's deflater starts from the image's last 32 KB, as one deflater writing both would, so its
      // matches reach back into the stored blocks.
      const tail = zlib.deflateRawSync(Buffer.concat([image.subarray(-20_000), text]), {
        dictionary: image.subarray(-32_768),
      });
      const mixed = Buffer.concat([storedHead, tail]);
      const data = (compressed: Buffer) => zlib.inflateRawSync(compressed);
      const cases: [Buffer, number, number][] = [
        [whole, image.length + 1, image.length],
        [mixed, data(mixed).length + 1, data(mixed).length],
        [mixed, data(mixed).length + 1, data(mixed).length - 5],
        [mixed, data(mixed).length + 1, data(mixed).length + 5],
        [Buffer.concat([mixed, Buffer.from('trailing bytes')]), data(mixed).length + 1, data(mixed).length],
        [Buffer.concat([storedHead, deflateBomb(64)]), 4 * 1024 * 1024, 2_000_000],
        [whole.subarray(0, whole.length - 1000), image.length + 1, image.length],
      ];
      for (const [compressed, max, size] of cases) {
        const expected = await outcome(node(compressed, max));
        const got = await entry(compressed, max, size, 0);
        // Never "checked": the core sums the CRC-32 and compares the size, as on zlib's output.
        expect(got.checked ?? false).toBe(false);
        expect(got.code ? { code: got.code } : got.failed ? { failed: true } : { bytes: got.bytes }).toEqual(expected);
      }
    });

    it('stops a bomb at the bound, and refuses what is not Deflate', async () => {
      expect(await entry(deflateBomb(64), 1024 * 1024, 1000, 0)).toEqual({ code: 'ERR_BUFFER_TOO_LARGE' });
      const cut = zlib.deflateRawSync(text).subarray(0, 1000);
      expect(await entry(cut, 1 << 24, text.length, zlib.crc32(text))).toEqual({ failed: true });
    });
  });
});
