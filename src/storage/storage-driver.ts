import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

/** Injection token of the configured driver (S13). */
export const STORAGE_DRIVER = Symbol('STORAGE_DRIVER');

export interface PutOptions {
  /** Abort (and store nothing) once the stream has produced more bytes than this. */
  maxBytes?: number;
}

/** An object found by `StorageDriver.list`. */
export interface StoredObject {
  key: string;
  /** When the object was last written (a replace counts). */
  modifiedAt: Date;
}

export interface PutFileOptions {
  /** The writer flushed the file to disk already (fsync before close): a move need not do it again. */
  synced?: boolean;
}

/**
 * S13: where SDF files live. Every write is atomic: a reader sees the old object or the new one, never a
 * part, and a failed or aborted write leaves nothing behind.
 */
export interface StorageDriver {
  readonly name: 'local' | 's3';
  /** Stores the stream under `key` (replacing any object there) and returns the bytes written. */
  put(key: string, body: Readable, options?: PutOptions): Promise<{ size: number }>;
  /**
   * Stores a file that is already on local disk (an upload spooled by the API). The driver may move it
   * rather than copy it (`moved`): the caller must not use `path` afterwards, only remove it if it was
   * not moved.
   */
  putFile(key: string, path: string, options?: PutFileOptions): Promise<{ size: number; moved: boolean }>;
  /**
   * Where a file meant for `putFile` is best written (a folder the driver can move it from without a
   * copy; the writer creates it when missing); undefined when any folder will do.
   */
  spoolDir?(): string;
  /** The object as a stream; `StorageNotFoundError` when there is none. */
  get(key: string): Promise<Readable>;
  getBuffer(key: string): Promise<Buffer>;
  /**
   * The object's path on this machine's disk, where the store is one (local): another process here
   * (the validation pool) reads the file itself instead of receiving its bytes through this one.
   */
  localPath?(key: string): string;
  /** Removes the object; removing a missing object is not an error. */
  delete(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  /**
   * Every object whose key starts with `prefix`, in no set order, fetched a page (or a folder) at a time;
   * never temporary files. An object written or removed meanwhile may or may not be listed.
   */
  list(prefix: string): AsyncIterable<StoredObject>;
  /** Readiness (S15): resolves when the store answers. */
  probe(): Promise<void>;
  close?(): Promise<void>;
}

export class StorageNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`no stored object under ${key}`);
    this.name = 'StorageNotFoundError';
  }
}

export class StorageLimitError extends Error {
  constructor(readonly maxBytes: number) {
    super(`stream exceeded ${maxBytes} bytes`);
    this.name = 'StorageLimitError';
  }
}

/** S13: the object key of a document's file. */
export function documentKey(tenantId: string, documentId: string): string {
  return `tenants/${tenantId}/documents/${documentId}.sdf`;
}

/**
 * The object key of a judged document's data.json, copied out of the stored file by the pool on the
 * first GET /data/:id and kept beside it, so later reads stream it without opening the archive.
 */
export function documentDataKey(tenantId: string, documentId: string): string {
  return `tenants/${tenantId}/documents/${documentId}.data.json`;
}

const SAFE_KEY = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

/** Keys are built by the service, but a driver never trusts one that could climb out of its root. */
export function assertSafeKey(key: string): void {
  if (!SAFE_KEY.test(key) || key.split('/').some((part) => part === '.' || part === '..')) {
    throw new Error(`unsafe storage key: ${JSON.stringify(key)}`);
  }
}

/** A temporary file's name, unique to this call: the time it was made and 8 random bytes. */
export function temporaryName(suffix: string): string {
  return `${Date.now()}-${randomBytes(8).toString('hex')}${suffix}`;
}

/**
 * A file another thread or process writes (flushed to disk before it closes it) in the driver's spool
 * folder, to be stored by a move: the bytes never pass through the caller.
 */
export interface SpoolTarget {
  /** Where the writer creates the file (exclusively; the folder may not exist yet). */
  readonly path: string;
  /** Puts the written file under `key` (atomic, S13). */
  store(key: string): Promise<void>;
  /** Removes the file unless it was moved into storage; safe to call at any point, more than once. */
  discard(): Promise<void>;
}

/** A new SpoolTarget in `spoolDir` (the driver's, see `StorageDriver.spoolDir`). */
export function spoolTarget(storage: StorageDriver, spoolDir: string, suffix: string): SpoolTarget {
  const path = join(spoolDir, temporaryName(suffix));
  let moved = false;
  return {
    path,
    store: async (key) => {
      ({ moved } = await storage.putFile(key, path, { synced: true }));
    },
    discard: async () => {
      if (!moved) await rm(path, { force: true });
    },
  };
}
