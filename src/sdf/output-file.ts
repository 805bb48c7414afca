import { closeSync, fdatasyncSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Writes `bytes` to a new file at `path` for a worker (a pool process or a signing thread) whose output
 * the service then moves into place: created exclusively with owner-only mode (its folder made only when
 * missing) and flushed to disk before it is closed. Blocking calls: the worker does nothing else
 * meanwhile, and each is cheaper than a hand-off to the thread pool and back.
 */
export function writeNewFile(path: string, bytes: Uint8Array): void {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    mkdirSync(dirname(path), { recursive: true });
    fd = openSync(path, 'wx', 0o600);
  }
  try {
    writeFileSync(fd, bytes);
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * A failed file call's code and call (ENOSPC in write), handed over beside a worker's error message so
 * the service can tell a full or read-only disk from a fault of the file.
 */
export interface SystemErrorCode {
  code: string;
  syscall: string;
}

/** The code and call of a Node system error (a file call that failed), else undefined. */
export function systemErrorCode(err: unknown): SystemErrorCode | undefined {
  const e = err as { code?: unknown; syscall?: unknown } | null;
  return e && typeof e.code === 'string' && typeof e.syscall === 'string'
    ? { code: e.code, syscall: e.syscall }
    : undefined;
}
