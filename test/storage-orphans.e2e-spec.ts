import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrphanSweeper } from '../src/documents/jobs/orphan-sweeper.js';
import { MetricsService } from '../src/metrics/metrics.service.js';
import { RedisService } from '../src/redis/redis.module.js';
import { documentDataKey, documentKey, STORAGE_DRIVER, type StorageDriver } from '../src/storage/storage-driver.js';
import { startApp, type TestApp } from './helpers/app.js';
import { downloadFile, upload, waitForFinal } from './helpers/documents.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { storageCases } from './helpers/storages.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

// The sweep is run with a grace of a few seconds here (the configured one is an hour at least); the wait
// is above it with a margin for stores that keep the time of a write to the second.
const GRACE_MS = 2_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const put = (storage: StorageDriver, key: string) => storage.put(key, Readable.from([Buffer.from('PK orphan')]));

async function validDocument(t: TestApp, tenant: TenantFixture): Promise<{ id: string; file: Buffer }> {
  const res = await upload(t, tenant.apiKey, (await buildSdf()).archive).expect(201);
  const id = res.body.id as string;
  expect((await waitForFinal(t, tenant.apiKey, id)).body.status).toBe('valid');
  return { id, file: await downloadFile(t, tenant.apiKey, id) };
}

async function removedCount(t: TestApp): Promise<Record<string, number>> {
  const metric = await t.app.get(MetricsService).storageOrphansRemoved.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.kind), v.value]));
}

describe('stored objects without a document record', () => {
  describe.each(storageCases)('on $name', ({ start }) => {
    let t: TestApp;
    let close: () => Promise<void>;
    let tenant: TenantFixture;
    let storage: StorageDriver;
    let sweeper: OrphanSweeper;

    beforeAll(async () => {
      ({ t, close } = await start());
      tenant = await createTenant(t);
      storage = t.app.get<StorageDriver>(STORAGE_DRIVER);
      sweeper = t.app.get(OrphanSweeper);
    }, 60_000);
    afterAll(() => close());

    it('go once older than the grace period; young ones, documents and their data stay', async () => {
      const doc = await validDocument(t, tenant);
      // The document's data.json copy, kept beside its file.
      await t.http().get(`/data/${doc.id}`).set('X-API-Key', tenant.apiKey).expect(200);
      expect(await storage.exists(documentDataKey(tenant.id, doc.id))).toBe(true);

      // A delete that removed the record and died before the file: the file is put back as it was.
      const deleted = await validDocument(t, tenant);
      await t.http().delete(`/sdf/${deleted.id}`).set('X-API-Key', tenant.apiKey).expect(204);
      await storage.put(documentKey(tenant.id, deleted.id), Readable.from([deleted.file]));
      // An upload whose record was never written, and a data.json copy whose document is gone.
      const oldFile = documentKey(tenant.id, randomUUID());
      const oldData = documentDataKey(tenant.id, randomUUID());
      await put(storage, oldFile);
      await put(storage, oldData);
      // Not a document's key: never the sweep's to remove.
      const other = `tenants/${tenant.id}/documents/notes.txt`;
      await put(storage, other);

      // Within the configured grace (an hour) nothing goes.
      expect(await sweeper.sweep()).toBe(0);

      await sleep(GRACE_MS + 1_500);
      // Written within the grace: an upload whose record may still come.
      const young = documentKey(tenant.id, randomUUID());
      await put(storage, young);
      const before = await removedCount(t);

      expect(await sweeper.sweep(GRACE_MS)).toBe(3);

      for (const key of [oldFile, oldData, documentKey(tenant.id, deleted.id)]) {
        expect(await storage.exists(key), key).toBe(false);
      }
      for (const key of [young, other, documentKey(tenant.id, doc.id), documentDataKey(tenant.id, doc.id)]) {
        expect(await storage.exists(key), key).toBe(true);
      }
      expect(await downloadFile(t, tenant.apiKey, doc.id)).toEqual(doc.file);
      await t.http().get(`/data/${doc.id}`).set('X-API-Key', tenant.apiKey).expect(200);
      const after = await removedCount(t);
      expect((after.sdf ?? 0) - (before.sdf ?? 0)).toBe(2);
      expect((after.data ?? 0) - (before.data ?? 0)).toBe(1);

      expect(await sweeper.sweep(GRACE_MS)).toBe(0);
      await storage.delete(young);
    });

    it('is left to the worker that holds the sweep', async () => {
      const orphan = documentKey(tenant.id, randomUUID());
      await put(storage, orphan);
      await sleep(GRACE_MS + 1_500);
      const redis = t.app.get(RedisService);
      const lock = redis.key('orphan-sweep');
      await redis.client.set(lock, 'another worker', 'PX', 60_000);
      expect(await sweeper.sweep(GRACE_MS)).toBeNull();
      expect(await storage.exists(orphan)).toBe(true);
      // Its holder's lease is its own: a sweep does not release another's.
      expect(await redis.client.get(lock)).toBe('another worker');

      await redis.client.del(lock);
      expect(await sweeper.sweep(GRACE_MS)).toBe(1);
      expect(await storage.exists(orphan)).toBe(false);
      expect(await redis.client.exists(lock)).toBe(0);
    });
  });

  describe('under row-level security, across tenants', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp({ env: { DATABASE_APP_ROLE: 'sdf_app' } });
    }, 60_000);
    afterAll(() => t.close());

    it("sees every tenant's records: only the orphan goes", async () => {
      const storage = t.app.get<StorageDriver>(STORAGE_DRIVER);
      const [a, b] = [await createTenant(t), await createTenant(t)];
      const docA = await validDocument(t, a);
      const docB = await validDocument(t, b);
      const orphan = documentKey(b.id, randomUUID());
      await put(storage, orphan);
      await sleep(GRACE_MS + 1_500);

      expect(await t.app.get(OrphanSweeper).sweep(GRACE_MS)).toBe(1);

      expect(await storage.exists(orphan)).toBe(false);
      expect(await downloadFile(t, a.apiKey, docA.id)).toEqual(docA.file);
      expect(await downloadFile(t, b.apiKey, docB.id)).toEqual(docB.file);
    });
  });
});
