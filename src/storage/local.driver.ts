import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ByteLimit } from './byte-limit.js';
import { assertSafeKey, StorageNotFoundError, type PutOptions, type StorageDriver } from './storage-driver.js';

const TMP = '.tmp';

function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}

/**
 * S13: files under a data folder. Writes go to a temporary file in the same folder tree, are fsynced,
 * then renamed over the target (atomic on POSIX); the folder is fsynced so the rename survives a crash.
 */
export class LocalStorageDriver implements StorageDriver {
  readonly name = 'local' as const;
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  private pathOf(key: string): string {
    assertSafeKey(key);
    if (key === TMP || key.startsWith(`${TMP}/`)) throw new Error('storage keys may not enter the temporary folder');
    return join(this.root, key);
  }

  private async tempPath(): Promise<string> {
    const dir = join(this.root, TMP);
    await mkdir(dir, { recursive: true });
    return join(dir, `${Date.now()}-${randomBytes(8).toString('hex')}.part`);
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<{ size: number }> {
    const target = this.pathOf(key);
    const temp = await this.tempPath();
    const limit = new ByteLimit(options.maxBytes);
    try {
      // `flush` fsyncs the file before it is closed, so the rename below publishes durable bytes.
      await pipeline(body, limit, createWriteStream(temp, { flags: 'wx', mode: 0o600, flush: true }));
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    await this.commit(temp, target);
    return { size: limit.bytes };
  }

  async putFile(key: string, path: string): Promise<{ size: number }> {
    return this.put(key, createReadStream(path));
  }

  private async commit(temp: string, target: string): Promise<void> {
    try {
      await mkdir(dirname(target), { recursive: true });
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    const dir = await open(dirname(target), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
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
    const temp = await this.tempPath();
    const handle = await open(temp, 'wx', 0o600);
    await handle.close();
    await unlink(temp);
  }
}
