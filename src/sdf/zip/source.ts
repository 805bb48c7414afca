import { close, closeSync, fstatSync, openSync, read, readSync } from 'node:fs';
import { promisify } from 'node:util';

/** Random access to the bytes of an archive, so a partial read (S2) never loads the whole file. */
export interface ByteSource {
  readonly size: number;
  read(offset: number, length: number): Promise<Buffer>;
  close(): Promise<void>;
}

export function bufferSource(buffer: Buffer): ByteSource {
  return {
    size: buffer.length,
    read: (offset, length) => Promise.resolve(buffer.subarray(offset, offset + length)),
    close: () => Promise.resolve(),
  };
}

/**
 * A file this small is read with blocking calls: its reads are few and short (a partial read touches the
 * central directory and one or two entries), and each asynchronous call costs a hand-off to the thread
 * pool and back that takes longer than the read itself.
 */
export const SYNC_READ_MAX_BYTES = 1024 * 1024;

const readAsync = promisify(read);
const closeAsync = promisify(close);

/**
 * One descriptor, opened and measured with blocking calls; a file of at most SYNC_READ_MAX_BYTES is
 * read with blocking calls too, a larger one through the thread pool.
 */
export async function fileSource(path: string): Promise<ByteSource> {
  const fd = openSync(path, 'r');
  let size: number;
  try {
    size = fstatSync(fd).size;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  const blocking = size <= SYNC_READ_MAX_BYTES;
  const readAt = blocking
    ? (buffer: Buffer, at: number, position: number) => readSync(fd, buffer, at, buffer.length - at, position)
    : (buffer: Buffer, at: number, position: number) =>
        readAsync(fd, buffer, at, buffer.length - at, position).then((r) => r.bytesRead);
  let closed = false;
  return {
    size,
    async read(offset, length) {
      const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
      let done = 0;
      while (done < buffer.length) {
        const bytesRead = await readAt(buffer, done, offset + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return done === buffer.length ? buffer : buffer.subarray(0, done);
    },
    async close() {
      if (closed) return;
      closed = true;
      if (blocking) closeSync(fd);
      else await closeAsync(fd);
    },
  };
}

export async function toSource(input: Buffer | string): Promise<ByteSource> {
  return typeof input === 'string' ? fileSource(input) : bufferSource(input);
}
