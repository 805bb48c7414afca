import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileSource, SYNC_READ_MAX_BYTES } from './source.js';

describe('fileSource', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sdf-source-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // Small files are read with blocking calls, larger ones through the thread pool: the same answers.
  it.each([
    ['a small file', 70_000],
    ['a file at the blocking-read limit', SYNC_READ_MAX_BYTES],
    ['a larger file', SYNC_READ_MAX_BYTES + 1],
  ])('reads ranges of %s, short at the end', async (_name, size) => {
    const bytes = randomBytes(size);
    const path = join(dir, `f-${size}`);
    writeFileSync(path, bytes);
    const source = await fileSource(path);
    try {
      expect(source.size).toBe(size);
      expect(await source.read(0, 22)).toEqual(bytes.subarray(0, 22));
      expect(await source.read(size - 1000, 1000)).toEqual(bytes.subarray(size - 1000));
      expect(await source.read(size - 10, 100)).toEqual(bytes.subarray(size - 10));
      expect((await source.read(size, 10)).length).toBe(0);
    } finally {
      await source.close();
    }
  });

  it('refuses a missing file with its error', async () => {
    await expect(fileSource(join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
