import { Transform, type TransformCallback } from 'node:stream';
import { StorageLimitError } from './storage-driver.js';

/** Counts bytes passing through and fails the pipeline as soon as `maxBytes` is crossed (F2: never buffer). */
export class ByteLimit extends Transform {
  bytes = 0;

  constructor(private readonly maxBytes = Number.POSITIVE_INFINITY) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      callback(new StorageLimitError(this.maxBytes));
      return;
    }
    callback(null, chunk);
  }
}
