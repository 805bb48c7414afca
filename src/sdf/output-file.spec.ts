import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeNewFile } from './output-file.js';

describe('writeNewFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sdf-output-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a new owner-only file, making its missing folder', () => {
    const path = join(dir, 'not', 'yet', 'there.out');
    writeNewFile(path, Buffer.from('signed bytes'));
    expect(readFileSync(path, 'utf8')).toBe('signed bytes');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('never writes over an existing file', () => {
    const path = join(dir, 'taken.out');
    writeNewFile(path, Buffer.from('first'));
    expect(() => writeNewFile(path, Buffer.from('second'))).toThrow(/EEXIST/);
    expect(readFileSync(path, 'utf8')).toBe('first');
  });
});
