import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

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

export async function fileSource(path: string): Promise<ByteSource> {
  const fd = openSync(path, 'r');
  let size: number;
  try {
    size = fstatSync(fd).size;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  if (size <= SYNC_READ_MAX_BYTES) return syncFileSource(fd, size);
  closeSync(fd);
  return asyncFileSource(path);
}

function syncFileSource(fd: number, size: number): ByteSource {
  let closed = false;
  return {
    size,
    read(offset, length) {
      try {
        const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
        let done = 0;
        while (done < buffer.length) {
          const bytesRead = readSync(fd, buffer, done, buffer.length - done, offset + done);
          if (bytesRead === 0) break;
          done += bytesRead;
        }
        return Promise.resolve(done === buffer.length ? buffer : buffer.subarray(0, done));
      } catch (error) {
        return Promise.reject(error as Error);
      }
    },
    close() {
      if (!closed) {
        closed = true;
        closeSync(fd);
      }
      return Promise.resolve();
    },
  };
}

async function asyncFileSource(path: string): Promise<ByteSource> {
  const handle: FileHandle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    return {
      size,
      async read(offset, length) {
        const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
        let done = 0;
        while (done < buffer.length) {
          const { bytesRead } = await handle.read(buffer, done, buffer.length - done, offset + done);
          if (bytesRead === 0) break;
          done += bytesRead;
        }
        return done === buffer.length ? buffer : buffer.subarray(0, done);
      },
      close: () => handle.close(),
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

export async function toSource(input: Buffer | string): Promise<ByteSource> {
  return typeof input === 'string' ? fileSource(input) : bufferSource(input);
}
