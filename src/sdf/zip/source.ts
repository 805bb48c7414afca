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

export async function fileSource(path: string): Promise<ByteSource> {
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
