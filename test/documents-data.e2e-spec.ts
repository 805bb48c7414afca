import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEntries } from '../src/sdf/index.js';
import { documentDataKey, STORAGE_DRIVER, type StorageDriver } from '../src/storage/storage-driver.js';
import { startApp, type TestApp } from './helpers/app.js';
import { binary, upload, waitForFinal } from './helpers/documents.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

/**
 * GET /data/:id reads data.json out of the stored file on first use (a pool process does) and keeps the
 * copy: on the local store and on S3 (a real S3-compatible server on loopback), byte for byte.
 */
describe('GET /data/:id', () => {
  const cases: { name: string; start: () => Promise<{ t: TestApp; close: () => Promise<void> }> }[] = [
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

  describe.each(cases)('on $name', ({ start }) => {
    let t: TestApp;
    let close: () => Promise<void>;
    let tenant: TenantFixture;
    let storage: StorageDriver;

    beforeAll(async () => {
      ({ t, close } = await start());
      tenant = await createTenant(t);
      storage = t.app.get<StorageDriver>(STORAGE_DRIVER);
    }, 60_000);
    afterAll(() => close());

    async function validDocument(): Promise<{ id: string; dataJson: Buffer }> {
      // Spacing and key order of their own: what is served is the file's bytes, not a re-serialisation.
      const { archive } = await buildSdf();
      const dataJson = (await readEntries(archive, [{ name: 'data.json' }])).get('data.json')!;
      const res = await upload(t, tenant.apiKey, archive).expect(201);
      expect((await waitForFinal(t, tenant.apiKey, res.body.id)).body.status).toBe('valid');
      return { id: res.body.id as string, dataJson };
    }

    const getData = (id: string) =>
      t
        .http()
        .get(`/data/${id}`)
        .set('X-API-Key', tenant.apiKey)
        .buffer(true)
        .parse(binary as never);

    it('serves data.json byte for byte, copying it out on the first request only', async () => {
      const { id, dataJson } = await validDocument();
      const key = documentDataKey(tenant.id, id);
      expect(await storage.exists(key)).toBe(false);

      const first = await getData(id);
      expect(first.status).toBe(200);
      expect(first.headers['content-type']).toMatch(/^application\/json/);
      expect(first.body).toEqual(dataJson);
      expect(await storage.exists(key)).toBe(true);

      const second = await getData(id);
      expect(second.status).toBe(200);
      expect(second.body).toEqual(dataJson);
      if (storage.spoolDir) expect(readdirSync(storage.spoolDir())).toEqual([]);
    });

    it('a deleted document takes its copy of data.json with it, and its data is 404 afterwards', async () => {
      const { id } = await validDocument();
      expect((await getData(id)).status).toBe(200);
      await t.http().delete(`/sdf/${id}`).set('X-API-Key', tenant.apiKey).expect(204);
      expect(await storage.exists(documentDataKey(tenant.id, id))).toBe(false);
      expect((await getData(id)).status).toBe(404);
    });

    it("another tenant's document is 404, and nothing is copied out for it", async () => {
      const { id } = await validDocument();
      const other = await createTenant(t);
      const res = await t.http().get(`/data/${id}`).set('X-API-Key', other.apiKey);
      expect(res.status).toBe(404);
      expect(await storage.exists(documentDataKey(tenant.id, id))).toBe(false);
    });
  });
});
