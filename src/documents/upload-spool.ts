import { randomBytes } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import type { Request } from 'express';
import { AppError } from '../common/errors.js';
import { ByteLimit } from '../storage/byte-limit.js';
import { createPrivateFile } from '../storage/private-file.js';
import { StorageLimitError } from '../storage/storage-driver.js';

/** An uploaded file on local disk; `discard()` removes it (always call it, success or not). */
export interface SpooledFile {
  path: string;
  size: number;
  filename: string | null;
  /** Flushed to disk before it was closed (SpoolOptions.durable). */
  synced: boolean;
  /** Says the file was moved away (into storage): `discard()` then has nothing to remove. */
  moved: () => void;
  discard: () => Promise<void>;
}

export interface SpoolOptions {
  maxBytes: number;
  tmpDir?: string;
  field?: string;
  /** fsync the file before closing it, for a file that is to be stored (moved into storage as it is). */
  durable?: boolean;
}

/** This process's spool files not yet moved into storage nor removed. */
const spooling = new Set<string>();

/**
 * Removes this process's spool files that are still there: at shutdown, after the requests still running
 * were cut, so that a process stopped mid-upload leaves none behind (a killed one leaves them to the
 * next start's sweep of temporary files).
 */
export async function removeSpoolFiles(): Promise<number> {
  const paths = [...spooling];
  spooling.clear();
  await Promise.all(paths.map((path) => unlink(path).catch(() => undefined)));
  return paths.length;
}

/** Multipart framing around the file never comes near this; a declared length beyond it cannot fit. */
const ENVELOPE_ALLOWANCE = 1024 * 1024;

export function payloadTooLarge(maxBytes: number): AppError {
  return AppError.of('PAYLOAD_TOO_LARGE', `The file exceeds the maximum size of ${maxBytes} bytes`, [
    { path: '/file', message: `must be at most ${maxBytes} bytes` },
  ]);
}

/**
 * S2/F2: streams the multipart field `file` to a private temporary file, counting bytes as they pass;
 * past `maxBytes` the write stops, the partial file is removed and the request fails with 413. The body
 * is never held in memory. The rest of a refused body is read and dropped (so the client sees the 413
 * instead of a reset connection).
 */
export async function spoolUpload(req: Request, options: SpoolOptions): Promise<SpooledFile> {
  const field = options.field ?? 'file';
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\b/i.test(contentType)) {
    req.resume();
    throw AppError.badRequest('Expected multipart/form-data with a file field', [
      { path: `/${field}`, message: 'is required (multipart/form-data)' },
    ]);
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > options.maxBytes + ENVELOPE_ALLOWANCE) {
    req.resume();
    throw payloadTooLarge(options.maxBytes);
  }

  // A private file (created exclusively, owner-only) under a name nobody can guess, opened before the
  // body is read; its folder is made only when missing.
  const dir = options.tmpDir ?? tmpdir();
  const path = join(dir, `sdf-upload-${randomBytes(16).toString('hex')}.part`);
  const handle = await createPrivateFile(path);
  spooling.add(path);
  let moved = false;
  const discard = async () => {
    if (moved) return;
    spooling.delete(path);
    await unlink(path).catch((err: unknown) => {
      // Never written.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    });
  };
  const synced = options.durable === true;

  try {
    return await new Promise<SpooledFile>((resolve, reject) => {
      let parser: busboy.Busboy;
      try {
        parser = busboy({ headers: req.headers, limits: { files: 1, fields: 20, fieldSize: 16 * 1024, parts: 32 } });
      } catch {
        reject(AppError.badRequest('Malformed multipart body'));
        return;
      }
      let writing: Promise<SpooledFile> | undefined;
      let settled = false;
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        req.unpipe(parser);
        req.resume();
        reject(err);
      };
      // A body cut before it was all read (the client went, the stall rule of request-body.ts, a shutdown
      // that cuts the requests still running) ends the spool, whether it went before or after this point.
      const cut = () => {
        fail(AppError.badRequest('Upload aborted by the client'));
        parser.destroy();
      };
      if (req.destroyed) {
        cut();
        return;
      }
      req.once('close', () => {
        if (!req.complete) cut();
      });

      parser.on('file', (name, stream, info) => {
        if (name !== field || writing) {
          stream.resume();
          return;
        }
        const limit = new ByteLimit(options.maxBytes);
        writing = pipeline(stream, limit, handle.createWriteStream({ flush: synced })).then(() => ({
          path,
          size: limit.bytes,
          filename: info.filename ?? null,
          synced,
          moved: () => {
            moved = true;
            spooling.delete(path);
          },
          discard,
        }));
        // A refusal is answered at once, without waiting for the rest of the body.
        writing.catch((err: unknown) =>
          fail(err instanceof StorageLimitError ? payloadTooLarge(options.maxBytes) : err),
        );
      });
      parser.on('close', () => {
        if (!writing) {
          fail(AppError.badRequest(`Missing file field "${field}"`, [{ path: `/${field}`, message: 'is required' }]));
          return;
        }
        writing.then((file) => {
          if (settled) return;
          settled = true;
          resolve(file);
        }, fail);
      });
      parser.on('error', () => fail(AppError.badRequest('Malformed multipart body')));
      req.on('aborted', cut);
      req.pipe(parser);
    });
  } catch (err) {
    await handle.close().catch(() => undefined); // never handed to a stream, or closed by it already
    await discard();
    throw err;
  }
}
