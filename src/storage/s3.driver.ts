import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Logger } from '@nestjs/common';
import { ByteLimit } from './byte-limit.js';
import {
  assertSafeKey,
  StorageNotFoundError,
  type PutOptions,
  type StorageDriver,
  type StoredObject,
} from './storage-driver.js';

export interface S3DriverOptions {
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
  /** A connection to the store that is not made within this fails the call. */
  connectTimeoutMs: number;
  /** A call whose connection moves no byte for this long fails (a store that stopped answering). */
  socketTimeoutMs: number;
  /** Attempts of one call, the first included; a streamed PUT is never sent twice. */
  maxAttempts: number;
  /** Keys per page of a listing (the store's own maximum, 1,000, when unset). */
  listPageSize?: number;
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}

const log = new Logger('Storage');

/**
 * Without a logger of its own the SDK writes some warnings to the console, one plain line per failed
 * streamed PUT while the store is away; the failure reaches the caller anyway, so they are debug lines.
 * Its info and error lines (each call, each failed call, with the call's input) are not wanted.
 */
const sdkLogger: NonNullable<S3ClientConfig['logger']> = {
  debug: () => undefined,
  info: () => undefined,
  warn: (...content: unknown[]) => log.debug({ msg: 'storage client', detail: content.map(String).join(' ') }),
  error: () => undefined,
};

/**
 * S13: any S3-compatible store (custom endpoint, path-style addressing). A single PUT replaces an object
 * atomically, so the stream is spooled to a local temporary file first: S3 needs the length up front,
 * and an aborted stream then never reaches the store.
 */
export class S3StorageDriver implements StorageDriver {
  readonly name = 's3' as const;
  private readonly client: S3Client;

  constructor(private readonly options: S3DriverOptions) {
    this.client = new S3Client({
      endpoint: options.endpoint,
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
      // Checksums only where the API demands them: several S3-compatible stores reject the newer trailers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // Without these a store that accepts connections but stopped answering (or a host that drops the
      // packets) holds a call, and the upload waiting on it, for as long as the TCP connection lives.
      // Every call is bounded instead, and fails as unavailable: 503 for a request, a postponed job.
      maxAttempts: options.maxAttempts,
      // The options of the SDK's own Node.js handler (NodeHttpHandler), which it builds from them.
      requestHandler: { connectionTimeout: options.connectTimeoutMs, socketTimeout: options.socketTimeoutMs },
      logger: sdkLogger,
    });
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<{ size: number }> {
    assertSafeKey(key);
    const dir = await mkdtemp(join(tmpdir(), 'sdf-s3-'));
    const spool = join(dir, randomBytes(8).toString('hex'));
    try {
      await pipeline(body, new ByteLimit(options.maxBytes), createWriteStream(spool, { mode: 0o600 }));
      return await this.putFile(key, spool);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async putFile(key: string, path: string): Promise<{ size: number; moved: boolean }> {
    assertSafeKey(key);
    // Opened here, before the call: a stream that opened the file itself would do so after the caller may
    // have removed it (a call refused at once), and an error of an unread stream would end the process.
    const handle = await open(path, 'r');
    const body = handle.createReadStream({ autoClose: false });
    // A file that cannot be read ends the call instead of leaving the store waiting for the rest.
    const abort = new AbortController();
    body.once('error', (err) => abort.abort(err));
    try {
      const { size } = await handle.stat();
      await this.client
        .send(
          new PutObjectCommand({
            Bucket: this.options.bucket,
            Key: key,
            Body: body,
            ContentLength: size,
            ContentType: 'application/vnd.sdf',
          }),
          { abortSignal: abort.signal },
        )
        .catch((err: unknown) => {
          throw abort.signal.aborted ? abort.signal.reason : err;
        });
      return { size, moved: false };
    } finally {
      // A refused or cut call leaves the file unread; while the store is away there are many of them.
      body.destroy();
      await handle.close();
    }
  }

  async get(key: string): Promise<Readable> {
    assertSafeKey(key);
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key }));
      if (!(res.Body instanceof Readable)) throw new Error('S3 returned no readable body');
      return res.Body;
    } catch (err) {
      throw isNotFound(err) ? new StorageNotFoundError(key) : err;
    }
  }

  async getBuffer(key: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.get(key)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async delete(key: string): Promise<void> {
    assertSafeKey(key);
    // S3 answers 204 for a missing key too, which is what delete promises.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: key }));
  }

  async exists(key: string): Promise<boolean> {
    assertSafeKey(key);
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: key }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async *list(prefix: string): AsyncIterable<StoredObject> {
    // Paged by marker (the last key seen) rather than by ListObjectsV2's opaque continuation token: every
    // S3-compatible store answers a marker the same way, and keys come in order, so none is skipped.
    let marker: string | undefined;
    for (;;) {
      const page = await this.client.send(
        new ListObjectsCommand({
          Bucket: this.options.bucket,
          Prefix: prefix,
          Marker: marker,
          MaxKeys: this.options.listPageSize,
        }),
      );
      const contents = page.Contents ?? [];
      for (const object of contents) {
        if (object.Key && object.LastModified) yield { key: object.Key, modifiedAt: object.LastModified };
      }
      const last = contents[contents.length - 1]?.Key;
      if (!page.IsTruncated || !last) return;
      marker = page.NextMarker ?? last;
    }
  }

  async probe(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket }));
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
