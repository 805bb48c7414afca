import { createReadStream, statSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ByteLimit } from './byte-limit.js';
import { FolderSync } from './folder-sync.js';
import { createPrivateFile, sweepStaleFiles } from './private-file.js';
import {
  assertSafeKey,
  StorageNotFoundError,
  type PutFileOptions,
  type PutOptions,
  type StorageDriver,
  temporaryName,
} from './storage-driver.js';

const TMP = '.tmp';

function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}

/**
 * S13: files under a data folder. Writes go to a temporary file in the same folder tree, are fsynced,
 * then renamed over the target (atomic on POSIX); the folder is fsynced so the rename survives a crash
 * (renames into one folder at the same moment share that fsync: FolderSync).
 */
export class LocalStorageDriver implements StorageDriver {
  readonly name = 'local' as const;
  private readonly root: string;
  /** Renames into one folder at the same moment share its fsync. */
  private readonly folders = new FolderSync();

  constructor(root: string) {
    this.root = resolve(root);
  }

  private pathOf(key: string): string {
    assertSafeKey(key);
    if (key === TMP || key.startsWith(`${TMP}/`)) throw new Error('storage keys may not enter the temporary folder');
    return join(this.root, key);
  }

  /** A new private temporary file. */
  private async openTemp(): Promise<{ temp: string; handle: FileHandle }> {
    const temp = join(this.root, TMP, temporaryName('.part'));
    return { temp, handle: await createPrivateFile(temp) };
  }

  /**
   * Temporary files (partial writes, spooled uploads) left by a process that died mid-write, removed
   * once they are a day old; returns how many.
   */
  sweepTemp(olderThanMs = 24 * 3600_000): Promise<number> {
    return sweepStaleFiles(join(this.root, TMP), olderThanMs);
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<{ size: number }> {
    const target = this.pathOf(key);
    const { temp, handle } = await this.openTemp();
    const limit = new ByteLimit(options.maxBytes);
    try {
      // `flush` fsyncs the file before it is closed, so the rename below publishes durable bytes.
      await pipeline(body, limit, handle.createWriteStream({ flush: true }));
    } catch (err) {
      await handle.close().catch(() => undefined);
      await rm(temp, { force: true });
      throw err;
    }
    try {
      await this.publish(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    return { size: limit.bytes };
  }

  /**
   * A file already on this disk (an upload spooled by the API) is fsynced (unless its writer did) and
   * moved into place, not copied; the caller's path is gone afterwards. Across filesystems
   * (UPLOAD_TMP_DIR elsewhere) it is copied, and the caller's file is left for the caller to remove.
   */
  async putFile(key: string, path: string, options: PutFileOptions = {}): Promise<{ size: number; moved: boolean }> {
    const target = this.pathOf(key);
    let size: number;
    if (options.synced) {
      size = statSync(path).size;
    } else {
      const handle = await open(path, 'r');
      try {
        size = (await handle.stat()).size;
        await handle.datasync();
      } finally {
        await handle.close();
      }
    }
    try {
      await this.publish(path, target);
      return { size, moved: true };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      return { ...(await this.put(key, createReadStream(path))), moved: false };
    }
  }

  /**
   * Where the API spools uploads when no UPLOAD_TMP_DIR is set: beside the stored files, so that
   * `putFile` moves them into place instead of copying them.
   */
  spoolDir(): string {
    return join(this.root, TMP);
  }

  /** Renames `from` over `target` (atomic on POSIX), then fsyncs the folder so the rename survives a crash. */
  private async publish(from: string, target: string): Promise<void> {
    try {
      await rename(from, target);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      // The target's folder is made on first use only (a tenant's first document).
      await mkdir(dirname(target), { recursive: true });
      await rename(from, target);
    }
    await this.folders.sync(dirname(target));
  }

  async get(key: string): Promise<Readable> {
    const path = this.pathOf(key);
    // Open first so a missing object is a clear error here rather than a stream error later.
    const handle = await open(path, 'r').catch((err: unknown) => {
      throw isNotFound(err) ? new StorageNotFoundError(key) : err;
    });
    return handle.createReadStream();
  }

  localPath(key: string): string {
    return this.pathOf(key);
  }

  async getBuffer(key: string): Promise<Buffer> {
    return readFile(this.pathOf(key)).catch((err: unknown) => {
      throw isNotFound(err) ? new StorageNotFoundError(key) : err;
    });
  }

  async delete(key: string): Promise<void> {
    await unlink(this.pathOf(key)).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  }

  async exists(key: string): Promise<boolean> {
    return stat(this.pathOf(key)).then(
      (s) => s.isFile(),
      (err: unknown) => {
        if (isNotFound(err)) return false;
        throw err;
      },
    );
  }

  /** Writable data folder: create it, then write and remove a probe file. */
  async probe(): Promise<void> {
    const { temp, handle } = await this.openTemp();
    await handle.close();
    await unlink(temp);
  }
}
