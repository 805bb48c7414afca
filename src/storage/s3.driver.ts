import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { ByteLimit } from './byte-limit.js';
import { assertSafeKey, StorageNotFoundError, type PutOptions, type StorageDriver } from './storage-driver.js';

export interface S3DriverOptions {
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}

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
    const { size } = await stat(path);
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.options.bucket,
        Key: key,
        Body: createReadStream(path),
        ContentLength: size,
        ContentType: 'application/vnd.sdf',
      }),
    );
    return { size, moved: false };
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

  async probe(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket }));
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
