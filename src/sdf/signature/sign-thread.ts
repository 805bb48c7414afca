import { parentPort } from 'node:worker_threads';
import { SdfError } from '../errors.js';
import { signArchive, type SignOptions } from './sign.js';

export interface SignTask {
  archive: Uint8Array;
  options: SignOptions;
}

export type SignReply = { signed: Uint8Array } | { error: { message: string; code?: SdfError['code']; file?: string } };

/** Runs in a signing thread: one archive at a time, the answer (or the error's parts) posted back. */
parentPort!.on('message', (task: SignTask) => {
  const archive = Buffer.from(task.archive.buffer, task.archive.byteOffset, task.archive.byteLength);
  signArchive(archive, task.options).then(
    (signed) => {
      // Handed over without a copy when the bytes own their memory (never a slice of Buffer's shared pool).
      const own = signed.byteOffset === 0 && signed.byteLength === signed.buffer.byteLength;
      parentPort!.postMessage({ signed } satisfies SignReply, own ? [signed.buffer as ArrayBuffer] : []);
    },
    (err: unknown) => {
      const error =
        err instanceof SdfError
          ? { message: err.message, code: err.code, ...(err.file ? { file: err.file } : {}) }
          : { message: err instanceof Error ? err.message : String(err) };
      parentPort!.postMessage({ error } satisfies SignReply);
    },
  );
});
