import { describe, expect, it } from 'vitest';
import { SdfError } from '../errors.js';
import { buildSdf } from '../testing/build-sdf.js';
import { deflateBomb } from '../testing/zip-builder.js';
import { validate } from '../validate.js';
import zlib from 'node:zlib';
import { openArchive, readEntries } from './archive.js';
import type { RawInflater } from './reader.js';

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SdfError) return error.code;
    throw error;
  }
  return 'no error';
}

describe('safe reader (F1, F2)', () => {
  it('opens a valid archive and inflates every entry', async () => {
    const archive = await openArchive(buildSdf());
    expect([...archive.files.keys()].sort()).toEqual(['data.json', 'meta.json', 'schema.json', 'visual.pdf']);
  });

  it('rejects bytes that are not a ZIP with SDF_ERROR_NOT_ZIP', async () => {
    expect(await codeOf(openArchive(Buffer.from('%PDF-1.7 this is not a zip')))).toBe('SDF_ERROR_NOT_ZIP');
    expect(await codeOf(openArchive(Buffer.alloc(0)))).toBe('SDF_ERROR_NOT_ZIP');
    const result = await validate(Buffer.from('hello'));
    expect(result.error?.code).toBe('SDF_ERROR_NOT_ZIP');
    // F3: every failure carries details, even one about the file as a whole.
    expect(result.error?.details).toEqual([{ path: '', message: result.error?.message }]);
    expect(result.checks).toEqual({
      container: 'fail',
      meta: 'skipped',
      schema: 'skipped',
      data: 'skipped',
      pdf: 'skipped',
      signature: 'skipped',
    });
  });

  it.each([
    ['extra root entry', 'notes.txt'],
    ['parent segment', '../evil.txt'],
    ['nested parent segment', 'vendor/../../evil.txt'],
    ['absolute name', '/etc/passwd'],
    ['drive letter', 'C:/evil.txt'],
    ['backslash', 'vendor\\evil.txt'],
    ['directory outside vendor/', 'docs/'],
    ['file outside vendor/', 'docs/readme.txt'],
  ])('rejects an entry with %s as SDF_ERROR_INVALID_ARCHIVE', async (_label, name) => {
    const sdf = buildSdf({ extra: [{ name, data: Buffer.from('x') }] });
    expect(await codeOf(openArchive(sdf))).toBe('SDF_ERROR_INVALID_ARCHIVE');
  });

  it('accepts vendor/ entries', async () => {
    const sdf = buildSdf({
      extra: [
        { name: 'vendor/', data: Buffer.alloc(0) },
        { name: 'vendor/zugferd/invoice.xml', data: Buffer.from('<xml/>') },
      ],
    });
    const result = await validate(sdf);
    expect(result.error).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it('rejects duplicate names', async () => {
    const sdf = buildSdf({ extra: [{ name: 'data.json', data: Buffer.from('{}') }] });
    expect(await codeOf(openArchive(sdf))).toBe('SDF_ERROR_INVALID_ARCHIVE');
  });

  it('rejects a symlink entry', async () => {
    const sdf = buildSdf({ extra: [{ name: 'vendor/link', data: Buffer.from('/etc/passwd'), unixMode: 0o120777 }] });
    expect(await codeOf(openArchive(sdf))).toBe('SDF_ERROR_INVALID_ARCHIVE');
  });

  it('rejects an encrypted entry', async () => {
    const sdf = buildSdf({ extra: [{ name: 'vendor/secret.bin', data: Buffer.from('x'), flags: 0x0801 }] });
    expect(await codeOf(openArchive(sdf))).toBe('SDF_ERROR_INVALID_ARCHIVE');
  });

  it('rejects an unsupported compression method', async () => {
    const sdf = buildSdf({ extra: [{ name: 'vendor/a.bz2', data: Buffer.from('x'), method: 12 }] });
    expect(await codeOf(openArchive(sdf))).toBe('SDF_ERROR_INVALID_ARCHIVE');
  });

  it('rejects an entry whose header under-declares its size', async () => {
    const sdf = buildSdf({ extra: [{ name: 'vendor/blob', data: Buffer.alloc(10_000, 1), declaredSize: 100 }] });
    expect(await codeOf(openArchive(sdf))).toBe('SDF_ERROR_INVALID_ARCHIVE');
  });

  it('counts inflated bytes, not declared ones: an under-declared entry past the limit is too large', async () => {
    const data = Buffer.alloc(2 * 1024 * 1024, 7);
    const sdf = buildSdf({ extra: [{ name: 'vendor/blob', data, declaredSize: 10 }] });
    expect(await codeOf(openArchive(sdf, { maxEntryBytes: 1024 * 1024 }))).toBe('SDF_ERROR_ARCHIVE_TOO_LARGE');
    expect(await codeOf(openArchive(sdf, { maxTotalBytes: 1024 * 1024 }))).toBe('SDF_ERROR_ARCHIVE_TOO_LARGE');
  });

  it('rejects a 1 GB bomb that declares its size, before inflating anything', async () => {
    const bomb = deflateBomb(1024);
    const sdf = buildSdf({
      extra: [{ name: 'vendor/bomb', data: Buffer.alloc(0), compressed: bomb, declaredSize: 1024 ** 3 }],
    });
    expect(await codeOf(openArchive(sdf))).toBe('SDF_ERROR_ARCHIVE_TOO_LARGE');
  });

  it('rejects a 1 GB bomb that lies about its size without holding the gigabyte', async () => {
    const bomb = deflateBomb(1024);
    expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
    const sdf = buildSdf({
      extra: [{ name: 'vendor/bomb', data: Buffer.alloc(0), compressed: bomb, declaredSize: 1000 }],
    });
    const before = process.memoryUsage().rss;
    const result = await validate(sdf);
    const grown = process.memoryUsage().rss - before;
    expect(result.error?.code).toBe('SDF_ERROR_ARCHIVE_TOO_LARGE');
    // Inflation stops at the 50 MB entry limit; a gigabyte never exists in memory.
    expect(grown).toBeLessThan(400 * 1024 * 1024);
  });

  it('rejects more entries than the limit', async () => {
    const extra = Array.from({ length: 20 }, (_, i) => ({ name: `vendor/f${i}`, data: Buffer.from('x') }));
    expect(await codeOf(openArchive(buildSdf({ extra }), { maxEntries: 10 }))).toBe('SDF_ERROR_ARCHIVE_TOO_LARGE');
  });

  it('reads only the named entries in a partial read', async () => {
    const entries = await readEntries(buildSdf({ entries: { 'visual.pdf': null } }), [
      { name: 'meta.json' },
      { name: 'visual.pdf' },
    ]);
    expect(JSON.parse(entries.get('meta.json')!.toString()).document_type).toBe('invoice');
    expect(entries.get('visual.pdf')).toBeUndefined();
  });

  describe('with an inflater of the host (the browser reader passes its native one)', () => {
    const zlibInflater = (compressed: Uint8Array, maxOutputLength: number): Promise<Buffer> =>
      Promise.resolve(zlib.inflateRawSync(compressed, { maxOutputLength }));

    it('reads the same entries', async () => {
      const sdf = buildSdf({ extra: [{ name: 'vendor/stored.txt', data: Buffer.from('as is'), method: 0 }] });
      const own = await openArchive(sdf, undefined, zlibInflater);
      expect(own.files).toEqual((await openArchive(sdf)).files);
    });

    it('still checks what it returns: size, CRC-32 and the bound, with the same errors', async () => {
      const sdf = buildSdf();
      const longer: RawInflater = async (c, max) => Buffer.concat([await zlibInflater(c, max), Buffer.from('x')]);
      const flipped: RawInflater = async (c, max) => {
        const out = Buffer.from(await zlibInflater(c, max));
        out[0]! ^= 1;
        return out;
      };
      expect(await codeOf(openArchive(sdf, undefined, longer))).toBe('SDF_ERROR_INVALID_ARCHIVE');
      expect(await codeOf(openArchive(sdf, undefined, flipped))).toBe('SDF_ERROR_INVALID_ARCHIVE');
      const bomb = buildSdf({
        extra: [{ name: 'vendor/bomb', data: Buffer.alloc(0), compressed: deflateBomb(4), declaredSize: 1000 }],
      });
      expect(await codeOf(openArchive(bomb, { maxEntryBytes: 1024 * 1024 }, zlibInflater))).toBe(
        'SDF_ERROR_ARCHIVE_TOO_LARGE',
      );
      const broken: RawInflater = () => Promise.reject(new Error('invalid stored block lengths'));
      expect(await codeOf(openArchive(sdf, undefined, broken))).toBe('SDF_ERROR_INVALID_ARCHIVE');
    });

    it('leaves the CRC-32 to an inflater that checked it, and still checks the size', async () => {
      const sdf = buildSdf();
      const crcs = new Map<number, number>();
      // The entry's declared CRC-32 reaches the inflater; one that says it checked it is taken at its word.
      const checking: RawInflater = async (c, max, _hint, crc) => {
        const data = await zlibInflater(c, max);
        crcs.set(crc, zlib.crc32(data));
        const out = Buffer.from(data);
        if (out.length > 0) out[0]! ^= 1;
        return { data: out, crc32Checked: true };
      };
      expect((await openArchive(sdf, undefined, checking)).files.size).toBeGreaterThan(0);
      expect([...crcs].every(([declared, actual]) => declared === actual)).toBe(true);
      const longer: RawInflater = async (c, max) => ({
        data: Buffer.concat([await zlibInflater(c, max), Buffer.from('x')]),
        crc32Checked: true,
      });
      expect(await codeOf(openArchive(sdf, undefined, longer))).toBe('SDF_ERROR_INVALID_ARCHIVE');
    });
  });
});
