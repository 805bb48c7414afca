import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEntries } from '../src/sdf/index.js';
import { documentDataKey, STORAGE_DRIVER, type StorageDriver } from '../src/storage/storage-driver.js';
import type { TestApp } from './helpers/app.js';
import { binary, upload, waitForFinal } from './helpers/documents.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { storageCases } from './helpers/storages.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

/**
 * GET /data/:id reads data.json out of the stored file on first use (a pool process does) and keeps the
 * copy: on the local store and on S3 (a real S3-compatible server on loopback), byte for byte.
 */
describe('GET /data/:id', () => {
  describe.each(storageCases)('on $name', ({ start }) => {
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
