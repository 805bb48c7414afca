import { existsSync, mkdtempSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getQueueToken } from '@nestjs/bullmq';
import type { Job, Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueName } from '../src/queue/queues.js';
import { openArchive } from '../src/sdf/index.js';
import { buildZip } from '../src/sdf/testing/zip-builder.js';
import { SignSdfProcessor } from '../src/signing/jobs/sign-sdf.processor.js';
import type { SignSdfJob } from '../src/signing/jobs/sign-sdf.job.js';
import {
  documentKey,
  STORAGE_DRIVER,
  StorageNotFoundError,
  type StorageDriver,
} from '../src/storage/storage-driver.js';
import { startApp, type TestApp } from './helpers/app.js';
import { downloadFile, upload, waitForFinal } from './helpers/documents.js';
import { distCli, requireBuild, runNode } from './helpers/processes.js';
import { buildInvalidSdf, buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';

/** One byte of data.json flipped (a digit of the invoice number), then re-zipped with every other entry as it was. */
async function tamperDataJson(archive: Buffer): Promise<Buffer> {
  const opened = await openArchive(archive);
  const entries = opened.entries.map((e) => ({ name: e.name, data: Buffer.from(opened.files.get(e.name)!) }));
  const data = entries.find((e) => e.name === 'data.json')!.data;
  const at = data.indexOf('INV-2026-00142') + 'INV-2026-0014'.length;
  expect(at).toBeGreaterThan(20);
  data[at] ^= 0x01; // '2' -> '3': still valid JSON and still schema-valid
  return buildZip(entries);
}

describe('signing and verification (F9, S3, S8, S9)', () => {
  let t: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let baseUrl: string;
  let dir: string;
  const logs: string[] = [];
  const admin = () => `Bearer ${t.adminToken()}`;

  const sign = (tenant: TenantFixture, id: string) => t.http().post(`/sign/${id}`).set('X-API-Key', tenant.apiKey);
  const verify = (tenant: TenantFixture, id: string) => t.http().post(`/verify/${id}`).set('X-API-Key', tenant.apiKey);
  const record = async (tenant: TenantFixture, id: string) =>
    (await t.http().get(`/sdf/${id}`).set('X-API-Key', tenant.apiKey).expect(200)).body;
  const download = (tenant: TenantFixture, id: string) => downloadFile(t, tenant.apiKey, id);
  const signedEvents = (id: string) =>
    t.ds.query(`SELECT payload FROM outbox_events WHERE event = 'document.signed' AND payload->'data'->>'id' = $1`, [
      id,
    ]) as Promise<{ payload: { data: Record<string, unknown> } }[]>;

  /** Upload, wait for validation; returns the record id. */
  async function uploadValid(tenant: TenantFixture, archive?: Buffer): Promise<string> {
    const res = await upload(t, tenant.apiKey, archive ?? (await buildSdf()).archive).expect(201);
    const final = await waitForFinal(t, tenant.apiKey, res.body.id);
    expect(final.body.status).toBe('valid');
    return res.body.id as string;
  }

  async function signToEnd(tenant: TenantFixture, id: string): Promise<void> {
    const res = await sign(tenant, id).expect(202);
    expect(res.body).toEqual({ id, status: 'valid', job_id: `sign-sdf:${id}` });
    await waitUntil(async () => (await record(tenant, id)).status === 'signed', `document ${id} signed`, 30_000);
  }

  async function sdfVerify(
    file: Buffer,
    slug: string,
  ): Promise<{ code: number | null; result: Record<string, unknown> }> {
    const path = join(dir, `${Math.random().toString(36).slice(2)}.sdf`);
    writeFileSync(path, file);
    const url = `${baseUrl}/.well-known/sdf-keys/${slug}`;
    const run = await runNode([distCli, 'verify', path, '--jwks-url', url, '--json'], process.env);
    return { code: run.code, result: JSON.parse(run.stdout) as Record<string, unknown> };
  }

  beforeAll(async () => {
    requireBuild(distCli);
    t = await startApp({ logSink: (line) => logs.push(line) });
    a = await createTenant(t, { rate_limit_rpm: 10_000 });
    b = await createTenant(t, { rate_limit_rpm: 10_000 });
    await t.app.listen(0, '127.0.0.1');
    baseUrl = (await t.app.getUrl()).replace('[::1]', '127.0.0.1');
    dir = mkdtempSync(join(tmpdir(), 'sdf-signing-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  it('upload -> valid -> sign -> signed; the download verifies offline with `sdf verify --jwks-url`', async () => {
    const original = (await buildSdf()).archive;
    const id = await uploadValid(a, original);
    await signToEnd(a, id);

    const doc = await record(a, id);
    expect(doc).toMatchObject({ status: 'signed', is_signed: true, signature_algorithm: 'ECDSA-P256' });
    const file = await download(a, id);
    expect(doc.file_size_bytes).toBe(file.length);

    // F9: signature.sig added, no other entry changed.
    const before = await openArchive(original);
    const after = await openArchive(file);
    expect([...after.files.keys()].sort()).toEqual([...before.files.keys(), 'signature.sig'].sort());
    for (const [name, bytes] of before.files) expect(after.files.get(name)!.equals(bytes)).toBe(true);

    const activeKey = (await t.http().get('/keys').set('X-API-Key', a.apiKey).expect(200)).body.keys[0].key_id;
    const cli = await sdfVerify(file, a.slug);
    expect(cli.code).toBe(0);
    expect(cli.result).toMatchObject({ valid: true, trusted: true, algorithm: 'ECDSA-P256', key_id: activeKey });

    const verified = await verify(a, id).expect(200);
    expect(verified.body).toEqual({
      valid: true,
      algorithm: 'ECDSA-P256',
      key_id: activeKey,
      signed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      trusted: true,
    });

    // S10: document.signed with the algorithm, committed with the status change.
    const events = await signedEvents(id);
    expect(events).toHaveLength(1);
    expect(events[0].payload.data).toMatchObject({ id, status: 'signed', algorithm: 'ECDSA-P256', key_id: activeKey });
    // S11: sign and verify are audited.
    const audit = await t.ds.query(
      `SELECT action, actor, metadata FROM audit_log WHERE resource_id = $1 AND action IN ('sign', 'verify') ORDER BY created_at`,
      [id],
    );
    expect(audit).toEqual([
      { action: 'sign', actor: `api_key:${a.keyPrefix}`, metadata: expect.objectContaining({ key_id: activeKey }) },
      {
        action: 'verify',
        actor: `api_key:${a.keyPrefix}`,
        metadata: expect.objectContaining({ valid: true, trusted: true, key_id: activeKey }),
      },
    ]);

    // The job ran with the S9 defaults: 3 attempts, exponential backoff from 2000 ms.
    const job = await t.app.get<Queue>(getQueueToken(QueueName.SignSdf)).getJob(id);
    expect(job?.opts).toMatchObject({ attempts: 3, backoff: { type: 'exponential', delay: 2000 } });

    // Re-uploaded as is, the file validates as signed by this tenant (the tenant key lookup is in validation).
    const again = await upload(t, a.apiKey, file).expect(201);
    const final = await waitForFinal(t, a.apiKey, again.body.id);
    expect(final.body).toMatchObject({ status: 'valid', is_signed: true, signature_algorithm: 'ECDSA-P256' });
    expect(final.body.validation.signature).toMatchObject({ valid: true, trusted: true, key_id: activeKey });
    // S3: an uploaded, already signed file is valid but cannot be signed again.
    const refused = await sign(a, again.body.id).expect(409);
    expect(refused.body.error.code).toBe('INVALID_STATE');
  });

  it('one flipped byte of data.json fails both `sdf verify` and a re-upload with SDF_ERROR_INVALID_SIGNATURE', async () => {
    const id = await uploadValid(a);
    await signToEnd(a, id);
    const tampered = await tamperDataJson(await download(a, id));

    const cli = await sdfVerify(tampered, a.slug);
    expect(cli.code).toBe(1);
    expect(cli.result).toMatchObject({ valid: false, reason: 'entry data.json was changed after signing' });

    const res = await upload(t, a.apiKey, tampered).expect(201);
    const final = await waitForFinal(t, a.apiKey, res.body.id);
    expect(final.body.status).toBe('invalid');
    expect(final.body.validation.checks.signature).toBe('fail');
    expect(final.body.validation.error.code).toBe('SDF_ERROR_INVALID_SIGNATURE');
  });

  it('rotation: earlier signatures stay trusted, new ones carry the new key; RSA-2048 and ECDSA-P256 end to end', async () => {
    const r = await createTenant(t, { rate_limit_rpm: 10_000 });
    const ecDoc = await uploadValid(r);
    await signToEnd(r, ecDoc);
    const ecKey = (await verify(r, ecDoc).expect(200)).body.key_id as string;

    const rotated = await t
      .http()
      .post(`/admin/tenants/${r.id}/signing-keys`)
      .set('Authorization', admin())
      .send({ algorithm: 'RSA-2048' })
      .expect(201);
    const rsaKey = rotated.body.key_id as string;
    const rsaDoc = await uploadValid(r);
    await signToEnd(r, rsaDoc);

    expect(await record(r, rsaDoc)).toMatchObject({ status: 'signed', signature_algorithm: 'RSA-2048' });
    expect((await verify(r, rsaDoc).expect(200)).body).toMatchObject({
      valid: true,
      trusted: true,
      algorithm: 'RSA-2048',
      key_id: rsaKey,
    });
    expect((await verify(r, ecDoc).expect(200)).body).toMatchObject({
      valid: true,
      trusted: true,
      algorithm: 'ECDSA-P256',
      key_id: ecKey,
    });
    expect((await signedEvents(rsaDoc))[0].payload.data).toMatchObject({ algorithm: 'RSA-2048', key_id: rsaKey });

    for (const [doc, kid] of [
      [ecDoc, ecKey],
      [rsaDoc, rsaKey],
    ]) {
      const cli = await sdfVerify(await download(r, doc), r.slug);
      expect(cli.code).toBe(0);
      expect(cli.result).toMatchObject({ valid: true, trusted: true, key_id: kid });
    }
    // Another tenant's JWKS does not vouch for these signatures.
    expect((await sdfVerify(await download(r, rsaDoc), b.slug)).code).toBe(1);
  });

  it('verify of an unsigned document answers valid: false with a reason', async () => {
    const id = await uploadValid(a);
    const res = await verify(a, id).expect(200);
    expect(res.body).toEqual({
      valid: false,
      algorithm: null,
      key_id: null,
      signed_at: null,
      trusted: false,
      reason: 'the archive is not signed',
    });
  });

  it('refuses invalid, already signed and foreign-signed documents with 409 INVALID_STATE', async () => {
    const invalid = await upload(t, a.apiKey, buildInvalidSdf()).expect(201);
    expect((await waitForFinal(t, a.apiKey, invalid.body.id)).body.status).toBe('invalid');
    const signed = await uploadValid(a);
    await signToEnd(a, signed);
    // Uploaded signed with a key that is not the tenant's: valid, is_signed, untrusted.
    const foreign = await upload(t, a.apiKey, (await buildSdf({ sign: 'RSA-2048' })).archive).expect(201);
    const foreignFinal = await waitForFinal(t, a.apiKey, foreign.body.id);
    expect(foreignFinal.body).toMatchObject({ status: 'valid', is_signed: true });
    expect(foreignFinal.body.validation.signature).toMatchObject({ valid: true, trusted: false });

    for (const [id, message] of [
      [invalid.body.id as string, /failed validation/],
      [signed, /already signed/],
      [foreign.body.id as string, /already signed/],
    ] as const) {
      const res = await sign(a, id).expect(409);
      expect(res.body.error).toMatchObject({ code: 'INVALID_STATE', message: expect.stringMatching(message) });
    }
    expect(await signedEvents(foreign.body.id)).toEqual([]);
  });

  it("answers 404 for another tenant's document on sign and verify, and leaves it untouched", async () => {
    const id = await uploadValid(a);
    for (const call of [sign, verify]) {
      const res = await call(b, id).expect(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    await sign(b, '00000000-0000-4000-8000-000000000000').expect(404);
    await sign(b, 'not-a-uuid').expect(400);
    expect(await record(a, id)).toMatchObject({ status: 'valid', is_signed: false });
    expect(
      await t.ds.query(`SELECT action FROM audit_log WHERE resource_id = $1 AND tenant_id = $2`, [id, b.id]),
    ).toEqual([]);
    await t.http().post(`/sign/${id}`).expect(401);
  });

  it('a tenant without an active key gets 409 and nothing is enqueued', async () => {
    const k = await createTenant(t, { rate_limit_rpm: 10_000 });
    const id = await uploadValid(k);
    // A tenant created before signing keys existed has none (docs/signing-keys.md).
    await t.ds.query(`UPDATE signing_keys SET is_active = false WHERE tenant_id = $1`, [k.id]);
    const res = await sign(k, id).expect(409);
    expect(res.body.error).toMatchObject({ code: 'INVALID_STATE', message: expect.stringMatching(/signing key/) });
    expect(await t.app.get<Queue>(getQueueToken(QueueName.SignSdf)).getJob(id)).toBeUndefined();
  });

  it('is idempotent: a double request signs once, and re-running the job changes nothing', async () => {
    const id = await uploadValid(a);
    const [first, second] = await Promise.all([sign(a, id), sign(a, id)]);
    const accepted = [first, second].filter((r) => r.status === 202);
    expect(accepted.length).toBeGreaterThan(0);
    for (const r of [first, second]) expect([202, 409]).toContain(r.status);
    for (const r of accepted) expect(r.body.job_id).toBe(`sign-sdf:${id}`);
    await waitUntil(async () => (await record(a, id)).status === 'signed', 'signed', 30_000);

    const stored = await download(a, id);
    const before = await record(a, id);
    const processor = t.app.get(SignSdfProcessor);
    const outcome = await processor.process({
      id: 'rerun',
      data: { tenantId: a.id, documentId: id },
    } as Job<SignSdfJob>);
    expect(outcome).toEqual({ skipped: 'already-final' });
    expect((await download(a, id)).equals(stored)).toBe(true);
    expect(await record(a, id)).toEqual(before);
    expect(await signedEvents(id)).toHaveLength(1);
    // A job for a document deleted meanwhile is a no-op too.
    await t.http().delete(`/delete/${id}`).set('X-API-Key', a.apiKey).expect(204);
    expect(
      await processor.process({ id: 'late', data: { tenantId: a.id, documentId: id } } as Job<SignSdfJob>),
    ).toEqual({ skipped: 'gone' });
  });

  describe('the signed file on local storage', () => {
    const storage = () => t.app.get<StorageDriver>(STORAGE_DRIVER);
    const leftovers = () =>
      existsSync(storage().spoolDir!()) ? readdirSync(storage().spoolDir!()).filter((n) => n.endsWith('.signed')) : [];
    const runJob = (tenant: TenantFixture, id: string) =>
      t.app
        .get(SignSdfProcessor)
        .process({ id: `direct-${id}`, data: { tenantId: tenant.id, documentId: id } } as Job<SignSdfJob>);

    it('is written by the signing thread and moved into place: the stored file verifies, nothing is left over', async () => {
      const id = await uploadValid(a);
      const before = await download(a, id);
      await signToEnd(a, id);
      const stored = await download(a, id);
      expect(stored.length).toBe((await record(a, id)).file_size_bytes);
      expect(stored.length).toBeGreaterThan(before.length);
      // Every entry but signature.sig byte for byte as uploaded (F9).
      const was = await openArchive(before);
      const now = await openArchive(stored);
      for (const [name, bytes] of was.files) expect(now.files.get(name)?.equals(bytes)).toBe(true);
      expect(now.files.has('signature.sig')).toBe(true);
      expect(leftovers()).toEqual([]);
    });

    it('a stored file gone while its record stays is a storage fault to retry; the record and the folder stay clean', async () => {
      const id = await uploadValid(a);
      unlinkSync(storage().localPath!(documentKey(a.id, id)));
      await expect(runJob(a, id)).rejects.toBeInstanceOf(StorageNotFoundError);
      expect(await record(a, id)).toMatchObject({ status: 'valid', is_signed: false });
      expect(await signedEvents(id)).toHaveLength(0);
      expect(leftovers()).toEqual([]);
    });

    it('a delete racing the job never leaves a signed file without its record', async () => {
      const ids = await Promise.all(Array.from({ length: 8 }, () => uploadValid(a)));
      const outcomes = await Promise.all(
        ids.map(async (id, i) => {
          // Staggered, so the delete lands before, during and after the job's write.
          const job = runJob(a, id);
          await new Promise((r) => setTimeout(r, i));
          const deleted = await t.http().delete(`/delete/${id}`).set('X-API-Key', a.apiKey);
          expect([204, 404]).toContain(deleted.status);
          return job;
        }),
      );
      // Gone before the job read it, or found unsignable at the write (the record deleted meanwhile), or signed first.
      for (const outcome of outcomes) {
        expect(['gone', 'already-final', 'signed']).toContain('skipped' in outcome ? outcome.skipped : outcome.status);
      }
      for (const id of ids) {
        await t.http().get(`/sdf/${id}`).set('X-API-Key', a.apiKey).expect(404);
        expect(existsSync(storage().localPath!(documentKey(a.id, id)))).toBe(false);
      }
      expect(leftovers()).toEqual([]);
    });
  });

  it('a sign request after a dead-lettered sign job retries it instead of being swallowed by the job id', async () => {
    const k = await createTenant(t, { rate_limit_rpm: 10_000 });
    const id = await uploadValid(k);
    const queue = t.app.get<Queue>(getQueueToken(QueueName.SignSdf));
    // A job that ran out of attempts: here one attempt, failing because the tenant had no active key.
    await t.ds.query(`UPDATE signing_keys SET is_active = false WHERE tenant_id = $1`, [k.id]);
    await queue.add('sign', { tenantId: k.id, documentId: id } satisfies SignSdfJob, { jobId: id, attempts: 1 });
    await waitUntil(async () => (await queue.getJobState(id)) === 'failed', 'the job to dead-letter');
    expect(await record(k, id)).toMatchObject({ status: 'valid', is_signed: false });

    await t.ds.query(`UPDATE signing_keys SET is_active = true WHERE tenant_id = $1`, [k.id]);
    await signToEnd(k, id);
    expect(await record(k, id)).toMatchObject({ status: 'signed', is_signed: true });
  });

  it('never logs the master key or a private key', () => {
    expect(logs.some((l) => l.includes('"signed"'))).toBe(true);
    const all = logs.join('\n');
    expect(all).not.toContain(t.config.env.MASTER_KEY!);
    expect(all).not.toMatch(/PRIVATE KEY/);
  });
});
