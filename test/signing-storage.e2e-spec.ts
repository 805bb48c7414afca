import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openArchive } from '../src/sdf/index.js';
import { STORAGE_DRIVER, type StorageDriver } from '../src/storage/storage-driver.js';
import type { TestApp } from './helpers/app.js';
import { downloadFile, upload, waitForFinal } from './helpers/documents.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { storageCases } from './helpers/storages.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';

/**
 * The signing job on each store (S13): on this machine's disk a signing thread reads the stored file and
 * writes the signed one, which is moved into place; on S3 the bytes are fetched, signed and put back.
 * Either way the stored file is the uploaded one plus signature.sig (F9), and it verifies.
 */
describe.each(storageCases)('signing on $name', ({ start }) => {
  let t: TestApp;
  let close: () => Promise<void>;
  let tenant: TenantFixture;

  beforeAll(async () => {
    ({ t, close } = await start());
    tenant = await createTenant(t);
  }, 60_000);
  afterAll(() => close());

  const download = (id: string) => downloadFile(t, tenant.apiKey, id);

  it('stores the uploaded file plus signature.sig, which verifies with the tenant key', async () => {
    const { archive } = await buildSdf();
    const res = await upload(t, tenant.apiKey, archive).expect(201);
    const id = res.body.id as string;
    expect((await waitForFinal(t, tenant.apiKey, id)).body.status).toBe('valid');

    await t.http().post(`/sign/${id}`).set('X-API-Key', tenant.apiKey).expect(202);
    let record: Record<string, unknown> = {};
    await waitUntil(async () => {
      record = (await t.http().get(`/sdf/${id}`).set('X-API-Key', tenant.apiKey).expect(200)).body;
      return record.status === 'signed';
    }, `document ${id} signed`);

    const stored = await download(id);
    expect(record.file_size_bytes).toBe(stored.length);
    const was = await openArchive(archive);
    const now = await openArchive(stored);
    expect([...now.files.keys()].sort()).toEqual([...was.files.keys(), 'signature.sig'].sort());
    for (const [name, bytes] of was.files) expect(now.files.get(name)!.equals(bytes)).toBe(true);

    const verified = await t.http().post(`/verify/${id}`).set('X-API-Key', tenant.apiKey).expect(200);
    expect(verified.body).toMatchObject({ valid: true, trusted: true });
    const storage = t.app.get<StorageDriver>(STORAGE_DRIVER);
    if (storage.spoolDir) expect(readdirSync(storage.spoolDir())).toEqual([]);
  });
});
