import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidateSdfProcessor } from '../src/documents/jobs/validate-sdf.processor.js';
import { ValidationPoolService } from '../src/documents/validation-pool.service.js';
import { QueueName } from '../src/queue/queues.js';
import {
  documentKey,
  STORAGE_DRIVER,
  StorageNotFoundError,
  type StorageDriver,
} from '../src/storage/storage-driver.js';
import { startApp, type TestApp } from './helpers/app.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { buildInvalidSdf, buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

/** Worker settings shrunk so a dead worker's job is noticed in about a second (production: 30 s). */
const WORKER_ENV = {
  PROCESS_ROLE: 'worker',
  WORKER_LOCK_DURATION_MS: '1000',
  WORKER_STALLED_INTERVAL_MS: '500',
  VALIDATION_TIMEOUT_MS: '3000',
  VALIDATION_POOL_WORKERS: '1',
};

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('validation jobs survive workers (S9)', () => {
  let api: TestApp;
  let tenant: TenantFixture;
  let queue: Queue;
  const extra: TestApp[] = [];

  beforeAll(async () => {
    api = await startApp({ env: { PROCESS_ROLE: 'api' } });
    tenant = await createTenant(api, { rate_limit_rpm: 10_000 });
    queue = api.app.get<Queue>(getQueueToken(QueueName.ValidateSdf));
  });
  afterAll(async () => {
    for (const w of extra) await w.close().catch(() => undefined);
    await api.close();
  });

  const status = async (id: string) =>
    (await api.ds.query(`SELECT status FROM documents WHERE id = $1`, [id]))[0]?.status;

  /** The payload enqueueValidation gives a document's job: the pending record as it is stored. */
  const jobData = async (id: string) => {
    const [row] = await api.ds.query(
      `SELECT tenant_id, storage_key, document_id, document_type, schema_id, sdf_version FROM documents WHERE id = $1`,
      [id],
    );
    const { tenant_id: tenantId, ...pending } = row as Record<string, unknown>;
    return { tenantId, documentId: id, pending };
  };

  const outboxCount = async (id: string, event: string) =>
    Number(
      (
        await api.ds.query(`SELECT count(*) AS n FROM outbox_events WHERE event = $2 AND payload->'data'->>'id' = $1`, [
          id,
          event,
        ])
      )[0].n,
    );

  it('a worker killed in the middle of a job: another picks it up and the document reaches its final state', async () => {
    // A schema with a catastrophic regex keeps the job busy until the pool's time budget (3 s here).
    const slow = buildInvalidSdf({
      schema: { type: 'object', properties: { invoice_number: { type: 'string', pattern: '^(a+)+$' } } },
      data: {
        document_type: 'invoice',
        invoice_number: `${'a'.repeat(40)}!`,
        totals: { gross: { amount: '1.00', currency: 'EUR' } },
      },
    });
    const res = await upload(api, tenant.apiKey, slow).expect(201);
    const id = res.body.id as string;

    const w1 = await startApp({ shareWith: api, env: WORKER_ENV });
    extra.push(w1);
    await until('the job to be active', async () => (await (await queue.getJob(id))?.getState()) === 'active');

    // Kill: stop the BullMQ worker without waiting for its job, and end the validation threads under it.
    await w1.app.get(ValidateSdfProcessor).worker.close(true);
    await w1.app.get(ValidationPoolService).destroy();
    await w1.close();
    expect(await status(id)).toBe('pending');

    const w2 = await startApp({ shareWith: api, env: WORKER_ENV });
    extra.push(w2);
    const final = await waitForFinal(api, tenant.apiKey, id, 30_000);
    expect(final.body.status).toBe('invalid');
    expect(final.body.validation.error.message).toMatch(/time budget/);
    const events = await api.ds.query(
      `SELECT count(*)::int AS n FROM outbox_events WHERE event = 'document.validated' AND payload->'data'->>'id' = $1`,
      [id],
    );
    expect(events[0].n).toBe(1);
    await w2.close();
  });

  it('the sweeper re-enqueues a document whose enqueue was lost', async () => {
    const { archive } = await buildSdf();
    const res = await upload(api, tenant.apiKey, archive).expect(201);
    const id = res.body.id as string;
    // Lose the enqueue: the job vanishes before any worker saw it, and the upload is long past.
    expect(await queue.remove(id)).toBe(1);
    await api.ds.query(`UPDATE documents SET created_at = now() - interval '10 minutes' WHERE id = $1`, [id]);

    const w = await startApp({
      shareWith: api,
      env: { ...WORKER_ENV, PENDING_SWEEP_INTERVAL_MS: '200', PENDING_SWEEP_AGE_MS: '60000' },
    });
    extra.push(w);
    const final = await waitForFinal(api, tenant.apiKey, id, 30_000);
    expect(final.body.status).toBe('valid');
  });

  it('a repeated job changes nothing once the document is final (S3)', async () => {
    const { archive } = await buildSdf();
    const res = await upload(api, tenant.apiKey, archive).expect(201);
    const id = res.body.id as string;
    await waitForFinal(api, tenant.apiKey, id, 30_000);
    const before = await api.ds.query(`SELECT status, updated_at, validation FROM documents WHERE id = $1`, [id]);
    const processor = extra[extra.length - 1]!.app.get(ValidateSdfProcessor);
    // A job of either form: one that reads the record, and one that carries it as it was enqueued.
    for (const data of [{ tenantId: tenant.id, documentId: id }, await jobData(id)]) {
      expect(await processor.process({ data, id } as never)).toEqual({ skipped: 'already-final' });
      expect(await api.ds.query(`SELECT status, updated_at, validation FROM documents WHERE id = $1`, [id])).toEqual(
        before,
      );
    }
    expect(await outboxCount(id, 'document.validated')).toBe(1);
  });

  it('a job carries its pending record as enqueued, and settles the record and its event from it', async () => {
    await queue.pause();
    const { archive } = await buildSdf();
    const res = await upload(api, tenant.apiKey, archive).expect(201);
    const id = res.body.id as string;
    const job = await queue.getJob(id);
    expect(job!.data).toEqual(await jobData(id));
    expect(await queue.remove(id)).toBe(1);
    await queue.resume();

    const processor = extra[extra.length - 1]!.app.get(ValidateSdfProcessor);
    expect(await processor.process({ data: job!.data, id } as never)).toEqual({ status: 'valid', code: null });
    const [row] = await api.ds.query(`SELECT status, document_type FROM documents WHERE id = $1`, [id]);
    expect(row).toEqual({ status: 'valid', document_type: 'invoice' });
    const [event] = await api.ds.query(
      `SELECT payload FROM outbox_events WHERE event = 'document.validated' AND payload->'data'->>'id' = $1`,
      [id],
    );
    expect(event.payload.data).toEqual({
      id,
      document_id: res.body.document_id,
      document_type: 'invoice',
      status: 'valid',
      schema_id: res.body.schema_id,
      valid: true,
      is_signed: false,
      error: null,
    });
  });

  it('a stored file that vanished while its job waited is retried, not judged invalid; with its record gone, the job is a no-op', async () => {
    const { archive } = await buildSdf();
    // No worker may take the job first: the queue is paused while it is taken out.
    await queue.pause();
    const res = await upload(api, tenant.apiKey, archive).expect(201);
    const id = res.body.id as string;
    expect(await queue.remove(id)).toBe(1);
    await queue.resume();
    const storage = api.app.get<StorageDriver>(STORAGE_DRIVER);
    const key = documentKey(tenant.id, id);
    // The pool reads the stored file by its path; here it is not there to read.
    expect(storage.localPath?.(key)).toBeDefined();
    await storage.delete(key);

    const processor = extra[extra.length - 1]!.app.get(ValidateSdfProcessor);
    const jobs = [{ tenantId: tenant.id, documentId: id }, await jobData(id)].map((data) => ({ data, id }) as never);
    for (const job of jobs) {
      await expect(processor.process(job)).rejects.toBeInstanceOf(StorageNotFoundError);
      expect(await status(id)).toBe('pending');
    }

    await api.http().delete(`/delete/${id}`).set('X-API-Key', tenant.apiKey).expect(204);
    for (const job of jobs) expect(await processor.process(job)).toEqual({ skipped: 'gone' });
  });
});
