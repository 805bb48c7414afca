import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VALIDATE_JOB_NAME, type ValidateSdfJob } from '../src/documents/jobs/validate-sdf.job.js';
import { QueueName } from '../src/queue/queues.js';
import { documentKey } from '../src/storage/storage-driver.js';
import { startApp, type TestApp } from './helpers/app.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';

const BACKLOG = 2000;

/**
 * S9: sign > validate under backlog. Order, not time, is asserted: with 2,000 real validation jobs
 * queued in front of it and one validation at a time, a sign request must be done while the
 * validation queue still holds waiting jobs. Were sign jobs queued behind validations (one queue,
 * FIFO), the backlog would have drained first.
 */
describe('sign jobs are not starved by a validation backlog (S9)', () => {
  let t: TestApp;
  let tenant: TenantFixture;
  let validateQueue: Queue;
  const pendingIds: string[] = [];

  beforeAll(async () => {
    t = await startApp({
      env: { VALIDATE_SDF_CONCURRENCY: '1', VALIDATION_POOL_WORKERS: '1', SIGN_SDF_CONCURRENCY: '1' },
    });
    tenant = await createTenant(t, { rate_limit_rpm: 10_000 });
    validateQueue = t.app.get<Queue>(getQueueToken(QueueName.ValidateSdf));
  });
  afterAll(async () => {
    // The rest of the backlog is dropped (waiting jobs only; the one running finishes) before shutdown.
    await validateQueue.drain(true).catch(() => undefined);
    await t.close();
  });

  it('a sign request completes while 2,000 validation jobs are still queued', async () => {
    const res = await upload(t, tenant.apiKey, (await buildSdf()).archive).expect(201);
    const signMe = res.body.id as string;
    expect((await waitForFinal(t, tenant.apiKey, signMe)).body.status).toBe('valid');

    // The backlog: 2,000 pending documents, each with a real stored file, each with its real
    // validation job. Files are written straight into the local store (same layout as the driver).
    const { archive } = await buildSdf();
    const storageRoot = t.config.env.STORAGE_LOCAL_DIR;
    for (let i = 0; i < BACKLOG; i++) {
      const id = randomUUID();
      const path = join(storageRoot, documentKey(tenant.id, id));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, archive);
      pendingIds.push(id);
    }
    await t.ds.query(
      `INSERT INTO documents (id, tenant_id, document_id, document_type, schema_id, sdf_version, file_size_bytes,
         storage_key, meta)
       SELECT id, $1::uuid, gen_random_uuid(), 'invoice', 'invoice/v1', '0.1', $2,
              'tenants/' || $1::text || '/documents/' || id || '.sdf', '{}'::jsonb
         FROM unnest($3::uuid[]) AS id`,
      [tenant.id, archive.length, pendingIds],
    );
    await validateQueue.addBulk(
      pendingIds.map((id) => ({
        name: VALIDATE_JOB_NAME,
        data: { tenantId: tenant.id, documentId: id } satisfies ValidateSdfJob,
        opts: { jobId: id },
      })),
    );
    expect(await validateQueue.getWaitingCount()).toBeGreaterThan(BACKLOG / 2);

    // S3: a pending document cannot be signed.
    const pending = await t
      .http()
      .post(`/sign/${pendingIds[BACKLOG - 1]}`)
      .set('X-API-Key', tenant.apiKey)
      .expect(409);
    expect(pending.body.error.code).toBe('INVALID_STATE');

    await t.http().post(`/sign/${signMe}`).set('X-API-Key', tenant.apiKey).expect(202);
    await waitUntil(
      async () => (await t.ds.query(`SELECT status FROM documents WHERE id = $1`, [signMe]))[0].status === 'signed',
      'the document to be signed',
      60_000,
    );

    // The order: signed while the validation backlog is still there.
    const waiting = await validateQueue.getWaitingCount();
    const [{ n: stillPending }] = (await t.ds.query(
      `SELECT count(*)::int AS n FROM documents WHERE tenant_id = $1 AND status = 'pending'`,
      [tenant.id],
    )) as { n: number }[];
    expect(waiting).toBeGreaterThan(0);
    expect(stillPending).toBeGreaterThan(0);
    // And the backlog is real work being done, not a stalled queue.
    await waitUntil(
      async () => (await validateQueue.getCompletedCount()) > 1,
      'validation jobs of the backlog to complete',
      60_000,
    );
  });
});
