import { mkdir, open, readdir, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * Creates a file for this process alone (exclusive create, owner-only mode); its folder is made only
 * when it is missing, not before every file.
 */
export async function createPrivateFile(path: string): Promise<FileHandle> {
  const create = () => open(path, 'wx', 0o600);
  try {
    return await create();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await mkdir(dirname(path), { recursive: true });
    return create();
  }
}

/**
 * Removes the files of a temporary folder last changed before `olderThanMs` ago: what a process that
 * died mid-write left behind. Files in use are younger. A missing folder is nothing to do.
 */
export async function sweepStaleFiles(dir: string, olderThanMs: number): Promise<number> {
  const names = await readdir(dir).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [] as string[];
    throw err;
  });
  const before = Date.now() - olderThanMs;
  let removed = 0;
  for (const name of names) {
    const path = join(dir, name);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile() || info.mtimeMs >= before) continue;
    await unlink(path).then(
      () => removed++,
      () => undefined, // removed meanwhile by its owner
    );
  }
  return removed;
}
