import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPrivateFile, sweepStaleFiles } from './private-file.js';

describe('private temporary files', () => {
  const root = mkdtempSync(join(tmpdir(), 'sdf-private-file-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('creates an owner-only file exclusively, making its missing folder first', async () => {
    const path = join(root, 'made', 'on', 'demand', 'a.part');
    const handle = await createPrivateFile(path);
    await handle.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    await expect(createPrivateFile(path)).rejects.toMatchObject({ code: 'EEXIST' });
  });

  it('sweeps files older than the bound and leaves younger files and folders alone', async () => {
    const dir = join(root, 'tmp');
    mkdirSync(join(dir, 'folder'), { recursive: true });
    writeFileSync(join(dir, 'old.part'), 'x');
    writeFileSync(join(dir, 'fresh.part'), 'y');
    const twoDaysAgo = new Date(Date.now() - 48 * 3600_000);
    utimesSync(join(dir, 'old.part'), twoDaysAgo, twoDaysAgo);
    utimesSync(join(dir, 'folder'), twoDaysAgo, twoDaysAgo);

    expect(await sweepStaleFiles(dir, 24 * 3600_000)).toBe(1);
    expect(existsSync(join(dir, 'old.part'))).toBe(false);
    expect(existsSync(join(dir, 'fresh.part'))).toBe(true);
    expect(existsSync(join(dir, 'folder'))).toBe(true);
    expect(await sweepStaleFiles(join(root, 'missing'), 0)).toBe(0);
  });
});
