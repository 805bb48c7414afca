import { readFileSync } from 'node:fs';
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { SdfError } from '../errors.js';
import { systemErrorCode, writeNewFile, type SystemErrorCode } from '../output-file.js';
import { signArchive, type SignOptions } from './sign.js';

export interface SignTask {
  /** The archive's bytes, or the path of the file to read here. */
  archive: Uint8Array | string;
  /** The key travels as PEM (`privateKeyPem`); the thread keeps it parsed for the next file. */
  options: Omit<SignOptions, 'privateKey'>;
  /**
   * Where to write the signed archive: a new file (created exclusively, mode 0600, flushed to disk
   * before it is closed); its size comes back instead of its bytes.
   */
  output?: string;
}

export type SignReply =
  | { signed: Uint8Array }
  | { size: number }
  | { error: { message: string; code?: SdfError['code']; file?: string; sys?: SystemErrorCode } };

/**
 * Parsed private keys by their PEM, most recently used last: parsing a PEM costs more than a quarter
 * of signing a 100 KB file, and a service signs many files with each tenant's one active key. Bounded,
 * so a deployment with many tenants keeps only the keys in use.
 */
const KEYS_KEPT = 32;
const keys = new Map<string, KeyObject>();

function parsedKey(pem: string): KeyObject {
  let key = keys.get(pem);
  if (key) keys.delete(pem);
  else key = createPrivateKey(pem);
  keys.set(pem, key);
  if (keys.size > KEYS_KEPT) keys.delete(keys.keys().next().value!);
  return key;
}

/**
 * One archive at a time. Files are read and written with blocking calls: this thread does nothing
 * else meanwhile, and a blocking call costs less than a hand-off to the thread pool and back.
 */
async function run(task: SignTask): Promise<{ reply: SignReply; transfer: ArrayBuffer[] }> {
  const { privateKeyPem, ...options } = task.options;
  const archive =
    typeof task.archive === 'string'
      ? readFileSync(task.archive)
      : Buffer.from(task.archive.buffer, task.archive.byteOffset, task.archive.byteLength);
  const signed = await signArchive(archive, {
    ...options,
    ...(privateKeyPem !== undefined ? { privateKey: parsedKey(privateKeyPem) } : {}),
  });
  if (task.output !== undefined) {
    writeNewFile(task.output, signed);
    return { reply: { size: signed.length }, transfer: [] };
  }
  // Handed over without a copy when the bytes own their memory (never a slice of Buffer's shared pool).
  const own = signed.byteOffset === 0 && signed.byteLength === signed.buffer.byteLength;
  return { reply: { signed }, transfer: own ? [signed.buffer as ArrayBuffer] : [] };
}

parentPort!.on('message', (task: SignTask) => {
  run(task).then(
    ({ reply, transfer }) => parentPort!.postMessage(reply, transfer),
    (err: unknown) => {
      const error =
        err instanceof SdfError
          ? { message: err.message, code: err.code, ...(err.file ? { file: err.file } : {}) }
          : { message: err instanceof Error ? err.message : String(err), sys: systemErrorCode(err) };
      parentPort!.postMessage({ error } satisfies SignReply);
    },
  );
});
