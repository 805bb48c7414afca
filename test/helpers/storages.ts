import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { startApp, type TestApp } from './app.js';

export interface StorageCase {
  name: string;
  start: () => Promise<{ t: TestApp; close: () => Promise<void> }>;
}

/**
 * The service on each storage driver (S13): this machine's disk, and S3 through a real S3-compatible
 * server on loopback (s3rver, its files in a temporary folder removed on close).
 */
export const storageCases: StorageCase[] = [
  {
    name: 'local storage',
    start: async () => {
      const t = await startApp();
      return { t, close: () => t.close() };
    },
  },
  {
    name: 'S3 storage',
    start: async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sdf-s3rver-'));
      const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir });
      const { port } = await server.run();
      const endpoint = `http://127.0.0.1:${port}`;
      const admin = new S3Client({
        endpoint,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      });
      await admin.send(new CreateBucketCommand({ Bucket: 'sdf-data' }));
      admin.destroy();
      const t = await startApp({
        env: {
          STORAGE_DRIVER: 's3',
          S3_ENDPOINT: endpoint,
          S3_BUCKET: 'sdf-data',
          S3_ACCESS_KEY_ID: 'S3RVER',
          S3_SECRET_ACCESS_KEY: 'S3RVER',
        },
      });
      return {
        t,
        close: async () => {
          await t.close();
          await server.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];
