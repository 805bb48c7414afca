import { createReadStream, statSync } from 'node:fs';
import {
  mkdir,
  open,
  opendir,
  readdir,
  readFile,
  rename,
  rm,
  rmdir,
  stat,
  unlink,
  type FileHandle,
} from 'node:fs/promises';
import { hostname } from 'node:os';
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
  type StoredObject,
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
  /** The data folder, absolute. */
  readonly root: string;
  /** Renames into one folder at the same moment share its fsync. */
  private readonly folders = new FolderSync();

  /**
   * This process's temporary folder under `.tmp`, named `<pid>@<host>`: at start, a folder of this host
   * whose process is gone (or that bears this process's own name, from an earlier life in the same
   * container) holds nothing anyone writes, and goes at once.
   */
  readonly instance: string;

  constructor(root: string, instance = `${process.pid}@${hostname()}`) {
    this.root = resolve(root);
    this.instance = instance;
  }

  private pathOf(key: string): string {
    assertSafeKey(key);
    if (key === TMP || key.startsWith(`${TMP}/`)) throw new Error('storage keys may not enter the temporary folder');
    return join(this.root, key);
  }

  /** A new private temporary file. */
  private async openTemp(): Promise<{ temp: string; handle: FileHandle }> {
    const temp = join(this.spoolDir(), temporaryName('.part'));
    return { temp, handle: await createPrivateFile(temp) };
  }

  /**
   * Temporary files (partial writes, spooled uploads, signed copies) no process will finish, which no
   * document refers to (a document's file is only ever the result of a rename); returns how many went.
   * The folders of processes of this host that are gone (and this process's own name, at start) go
   * whole; in the folders of other hosts' processes, files unchanged for `idleMs` (a live upload writes
   * at least every UPLOAD_BODY_STALL_MS or is cut). This process's own folder is otherwise left alone.
   */
  async sweepTemp(idleMs: number, options: { atStart?: boolean } = {}): Promise<number> {
    const tmp = join(this.root, TMP);
    const entries = await readdir(tmp, { withFileTypes: true }).catch((err: unknown) => {
      if (isNotFound(err)) return [];
      throw err;
    });
    let removed = 0;
    const here = hostname();
    for (const entry of entries) {
      const path = join(tmp, entry.name);
      if (!entry.isDirectory()) continue;
      const [pid, host] = splitInstance(entry.name);
      const own = entry.name === this.instance;
      if (own && !options.atStart) continue;
      if (own || (host === here && pid !== null && !isRunning(pid))) {
        removed += await countFiles(path);
        await rm(path, { recursive: true, force: true });
        continue;
      }
      removed += await sweepStaleFiles(path, idleMs);
      // An emptied folder of a process that is gone; one still in use is not empty or is made again.
      await rmdir(path).catch(() => undefined);
    }
    // Loose files directly under .tmp: written by releases that had no folder per process.
    return removed + (await sweepStaleFiles(tmp, idleMs));
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
    return join(this.root, TMP, this.instance);
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

  async *list(prefix: string): AsyncIterable<StoredObject> {
    // Start in the deepest folder the prefix names whole; the rest of it filters the keys found below.
    const cut = prefix.lastIndexOf('/');
    const base = cut < 0 ? '' : prefix.slice(0, cut);
    if (base !== '') assertSafeKey(base);
    yield* this.walk(base, prefix);
  }

  private async *walk(folder: string, prefix: string): AsyncGenerator<StoredObject> {
    const dir = await opendir(join(this.root, folder)).catch((err: unknown) => {
      if (isNotFound(err) || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
      throw err;
    });
    if (!dir) return;
    // One entry at a time (opendir), so a folder of a million documents is never held in memory whole.
    for await (const entry of dir) {
      const key = folder === '' ? entry.name : `${folder}/${entry.name}`;
      if (key === TMP) continue;
      if (entry.isDirectory()) {
        if (prefix.startsWith(`${key}/`) || key.startsWith(prefix)) yield* this.walk(key, prefix);
        continue;
      }
      if (!entry.isFile() || !key.startsWith(prefix)) continue;
      const info = await stat(join(this.root, key)).catch((err: unknown) => {
        if (isNotFound(err)) return null; // removed since the folder was read
        throw err;
      });
      if (info) yield { key, modifiedAt: info.mtime };
    }
  }

  /** Writable data folder: create it, then write and remove a probe file. */
  async probe(): Promise<void> {
    const { temp, handle } = await this.openTemp();
    await handle.close();
    await unlink(temp);
  }
}

function splitInstance(name: string): [number | null, string] {
  const at = name.indexOf('@');
  const pid = Number(name.slice(0, at));
  return at > 0 && Number.isInteger(pid) && pid > 0 ? [pid, name.slice(at + 1)] : [null, ''];
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function countFiles(dir: string): Promise<number> {
  const names = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return names.filter((e) => e.isFile()).length;
}
