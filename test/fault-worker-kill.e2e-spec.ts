import { randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import pg from 'pg';
import type { Test } from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueName } from '../src/queue/queues.js';
import { openArchive } from '../src/sdf/index.js';
import { deliveryJobId } from '../src/webhooks/jobs/delivery-job.js';
import {
  configureBody,
  erpInvoices,
  invoiceData,
  isInvoiceCreate,
  secretsFor,
  startStandIn,
} from './helpers/connectors.js';
import { decodeJwt } from './helpers/accounts.js';
import type { ErpStandIn } from './helpers/erp-standin.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { ServiceCluster, type ServiceProcess } from './helpers/service-processes.js';
import { startSmtpSink, tokenFromMail, type SmtpSink } from './helpers/smtp.js';
import { waitUntil } from './helpers/wait.js';
import { verifySignature, WebhookReceiver } from './helpers/webhook-receiver.js';

const OPEN_SCHEMA = { type: 'object', required: ['document_type'] };
const PASSWORD = 'a long unusual passphrase 42';

describe('a worker killed (SIGKILL) in the middle of validations, signings, webhook deliveries, mails and ERP pushes (managed deployment)', () => {
  let cluster: ServiceCluster;
  let api: ServiceProcess;
  let receiver: WebhookReceiver;
  let standIn: ErpStandIn;
  let smtp: SmtpSink;
  let db: pg.Client;
  const creds = secretsFor('basic');

  beforeAll(async () => {
    [receiver, standIn, smtp] = await Promise.all([
      WebhookReceiver.start(),
      startStandIn('SAP', creds),
      startSmtpSink(),
    ]);
    cluster = await ServiceCluster.create({
      env: {
        DEPLOYMENT_MODE: 'managed',
        SMTP_URL: smtp.url,
        // The receiver and the ERP stand-in listen on loopback.
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_RETRY_BASE_DELAY_MS: '200',
        EMAIL_RETRY_BASE_DELAY_MS: '200',
        UPLOADS_IN_FLIGHT_PER_TENANT: '64',
        USAGE_FLUSH_INTERVAL_MS: '1000',
      },
      // The first worker waits a minute for a receiver or an ERP that does not answer: it dies first.
      roleEnv: { worker: { WEBHOOK_TIMEOUT_MS: '60000', ERP_TIMEOUT_MS: '60000' } },
    });
    api = await cluster.start('api');
    db = new pg.Client({ connectionString: cluster.postgres.url });
    await db.connect();
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await cluster?.remove();
    await receiver?.close();
    await standIn?.stop();
    await smtp?.close();
  });

  it('after a new worker starts: every document final, one valid signature each, every event delivered with identical bodies, every mail sent once, every push made once, usage counted once', async () => {
    const w1 = await cluster.start('worker');
    const admin = { Authorization: `Bearer ${cluster.adminToken()}` };

    // An organization registered as a customer does it: its owner verifies the address (a mail) and signs in.
    const ownerEmail = `owner-${randomBytes(4).toString('hex')}@example.test`;
    const slug = `kill-${randomBytes(4).toString('hex')}`;
    await api
      .http()
      .post('/v1/auth/register')
      .send({ email: ownerEmail, password: PASSWORD, organization: `Org ${slug}`, slug })
      .expect(202);
    const verification = await waitUntil(() => smtp.mails.find((m) => m.to === ownerEmail), 'the verification mail');
    await api
      .http()
      .post('/v1/auth/verify-email')
      .send({ token: tokenFromMail(verification) })
      .expect(200);
    const login = await api.http().post('/v1/auth/login').send({ email: ownerEmail, password: PASSWORD }).expect(200);
    const tenantId = decodeJwt(login.body.access_token as string).tenant_id as string;
    // An operator lifts Free's rate and quotas, lets its connectors reach the stand-in and issues an API key.
    await api
      .http()
      .patch(`/admin/tenants/${tenantId}`)
      .set(admin)
      .send({ plan: 'enterprise', limits: { rpm: 100_000 } })
      .expect(200);
    await api
      .http()
      .put(`/admin/tenants/${tenantId}/connector-private-targets`)
      .set(admin)
      .send({ targets: ['127.0.0.1/32'] })
      .expect(200);
    const apiKey = (
      await api.http().post(`/admin/tenants/${tenantId}/keys`).set(admin).send({ name: 'fault test' }).expect(201)
    ).body.key as string;

    // Every request made with the tenant's API key is one API call of its period (the usage routes
    // excepted, which spend none): counted here as the customer would. The owner's signed-in session is a
    // person using the portal: its requests are held to their own per-user limit and are no API calls.
    let calls = 0;
    const withKey = (req: Test): Test => {
      calls++;
      return req.set('X-API-Key', apiKey);
    };
    const asOwner = (req: Test): Test => req.set('Authorization', `Bearer ${login.body.access_token as string}`);

    const secret = randomBytes(24).toString('hex');
    await withKey(api.http().post('/webhooks'))
      .send({ url: receiver.url(), secret, events: ['document.validated', 'document.signed'] })
      .expect(201);
    const connector = await withKey(api.http().post('/connectors/configure')).send(
      configureBody('SAP', standIn, creds),
    );
    expect(connector.status).toBe(201);

    const uploadInvoice = async (data: Record<string, unknown>) => {
      const { archive } = await buildSdf({ data, schema: OPEN_SCHEMA });
      const res = await withKey(api.http().post('/upload')).attach('file', archive, 'f.sdf');
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const statusOf = async (ids: string[]) =>
      (await db.query<{ status: string }>(`SELECT status FROM documents WHERE id = ANY($1)`, [ids])).rows;

    // 30 documents valid before the fault: 20 to sign, 10 to push.
    const pushData = Array.from({ length: 10 }, () => invoiceData());
    const toPush = await Promise.all(pushData.map((d) => uploadInvoice(d)));
    const toSign = await Promise.all(Array.from({ length: 20 }, () => uploadInvoice(invoiceData())));
    await waitUntil(
      async () => (await statusOf([...toPush, ...toSign])).filter((r) => r.status === 'valid').length === 30,
      '30 documents valid',
      60_000,
    );
    await waitUntil(() => receiver.received.length >= 30, '30 deliveries', 30_000);

    // From here the receiver holds its first five requests unanswered, the ERP accepts its first three
    // invoices without answering and the mail relay holds every transaction at MAIL FROM: the worker is
    // killed while it waits on them.
    const before = receiver.received.length;
    receiver.behaviour = (n) => (n < before + 5 ? 'hang' : 200);
    standIn.inject(isInvoiceCreate, { acceptThenHang: true }, { acceptThenHang: true }, { acceptThenHang: true });
    smtp.stall();
    const invitees = Array.from(
      { length: 10 },
      (_, i) => `invitee-${i}-${randomBytes(3).toString('hex')}@example.test`,
    );
    const fresh = Array.from({ length: 50 }, () => uploadInvoice(invoiceData()));
    const signs = toSign.map((id) => withKey(api.http().post(`/sign/${id}`)));
    const pushes = toPush.map((id) =>
      withKey(api.http().post(`/connectors/push-to-erp/${id}`)).send({ connector_id: connector.body.id }),
    );
    const invitations = invitees.map((email) =>
      asOwner(api.http().post('/v1/account/team/invitations')).send({ email, role: 'member' }),
    );
    const [validating, signed, pushed, invited] = await Promise.all([
      Promise.all(fresh),
      Promise.all(signs),
      Promise.all(pushes),
      Promise.all(invitations),
    ]);
    for (const s of signed) expect(s.status).toBe(202);
    for (const p of pushed) expect(p.status).toBe(202);
    for (const i of invited) expect(i.status).toBe(201);
    await waitUntil(() => receiver.received.length >= before + 5, 'the worker to be waiting on the receiver', 30_000);
    await waitUntil(
      () => standIn.requests.filter(isInvoiceCreate).length >= 3,
      'the worker to be waiting on the ERP',
      30_000,
    );
    await waitUntil(() => smtp.stalled() >= 4, 'the worker to be waiting on the mail relay', 30_000);
    expect(smtp.mails).toHaveLength(1);
    const killedAt = Date.now();
    await w1.kill();
    smtp.release();

    const w2 = await cluster.start('worker');
    const startedAt = Date.parse(w2.logs.find((l) => l.msg === 'worker started')!.time as string);
    const all = [...validating, ...toSign, ...toPush];
    await waitUntil(
      async () => {
        const rows = await statusOf(all);
        const pushesLeft = await db.query(`SELECT 1 FROM erp_pushes WHERE status NOT IN ('succeeded', 'failed')`);
        return (
          rows.every((r) => r.status !== 'pending') &&
          rows.filter((r) => r.status === 'signed').length === 20 &&
          pushesLeft.rowCount === 0 &&
          invitees.every((to) => smtp.mails.some((m) => m.to === to))
        );
      },
      'every document final, signed and pushed, every invitation mailed',
      90_000,
    );
    const finalAt = Date.now();
    // Taken over, and said so by the worker that took over.
    const takeovers = w2.logs
      .filter((l) => l.msg === 'a stalled job was taken over: the worker that held it stopped renewing its lock')
      .map((l) => Date.parse(l.time as string));
    expect(takeovers.length).toBeGreaterThan(0);
    // What docs/operations.md states: a worker started after the kill takes the jobs over at its first
    // stalled-job check after their locks lapsed (WORKER_LOCK_DURATION_MS after their last renewal).
    console.log(
      `takeover: the new worker started ${startedAt - killedAt} ms after the kill; it took over ${takeovers.length} ` +
        `jobs from ${Math.min(...takeovers) - killedAt} ms to ${Math.max(...takeovers) - killedAt} ms after the kill ` +
        `(${Math.max(...takeovers) - startedAt} ms after its start)`,
    );

    // Documents: 60 valid, 20 signed; each signed one holds one signature that verifies with the tenant's key.
    const counts = await db.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM documents GROUP BY status ORDER BY status`,
    );
    expect(counts.rows).toEqual([
      { status: 'signed', n: 20 },
      { status: 'valid', n: 60 },
    ]);
    for (const id of toSign) {
      const verdict = await withKey(api.http().post(`/verify/${id}`)).expect(200);
      expect(verdict.body).toMatchObject({ valid: true, trusted: true });
      const file = await withKey(api.http().get(`/download/${id}`))
        .buffer(true)
        .parse((res, cb) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => cb(null, Buffer.concat(chunks)));
        })
        .expect(200);
      // openArchive refuses duplicate entries: one signature.sig.
      expect((await openArchive(file.body as Buffer)).files.has('signature.sig')).toBe(true);
    }
    const signedEvents = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events WHERE event = 'document.signed' GROUP BY payload->'data'->>'id'`,
    );
    expect(signedEvents.rows).toHaveLength(20);
    expect(signedEvents.rows.every((r) => r.n === 1)).toBe(true);

    // Webhooks: every event at least once; every delivery of one event the same bytes, correctly signed.
    const events = await db.query<{ id: string }>(
      `SELECT id FROM outbox_events WHERE event IN ('document.validated', 'document.signed')`,
    );
    expect(events.rowCount).toBe(100);
    const undelivered = () =>
      events.rows.filter((e) => !receiver.received.some((r) => r.headers['x-sdf-delivery'] === e.id)).map((e) => e.id);
    try {
      // Deliveries the killed worker held are taken over once their lock lapses, then retried with backoff:
      // on a loaded machine that can take a while, so the bound is wide.
      await waitUntil(() => undelivered().length === 0, 'every event delivered', 120_000);
    } catch (error) {
      const missing = await db.query(
        `SELECT id, event, created_at, dispatched_at, seq FROM outbox_events WHERE id = ANY($1)`,
        [undelivered()],
      );
      console.log(`events not delivered:\n${missing.rows.map((row) => JSON.stringify(row)).join('\n')}`);
      // And where their delivery jobs are: waiting, delayed for a retry, active, failed (and why).
      const hooks = await db.query<{ id: string }>(`SELECT id FROM webhooks`);
      const queue = new Queue(QueueName.WebhookDelivery, { connection: { url: cluster.redis.url }, prefix: 'sdf' });
      queue.on('error', () => undefined);
      try {
        for (const event of undelivered()) {
          for (const hook of hooks.rows) {
            const job = await queue.getJob(deliveryJobId(event, hook.id));
            const state = job ? await job.getState() : 'absent';
            console.log(
              `delivery job of ${event} to ${hook.id}: ${state}`,
              job
                ? JSON.stringify({
                    attemptsMade: job.attemptsMade,
                    stalledCounter: job.stalledCounter,
                    failedReason: job.failedReason,
                    processedOn: job.processedOn,
                    finishedOn: job.finishedOn,
                  })
                : '',
            );
          }
        }
      } finally {
        await queue.close();
      }
      throw error;
    }
    // Where a slow run spent its time, beside the takeover's line above.
    console.log(
      `after the kill: every document final, pushed and mailed at ${finalAt - killedAt} ms, every event ` +
        `delivered at ${Date.now() - killedAt} ms`,
    );
    const byDelivery = new Map<string, Buffer[]>();
    for (const r of receiver.received) {
      expect(verifySignature(secret, r.raw, r.headers['x-sdf-signature'])).toBe(true);
      const id = String(r.headers['x-sdf-delivery']);
      byDelivery.set(id, [...(byDelivery.get(id) ?? []), r.raw]);
    }
    for (const bodies of byDelivery.values()) for (const b of bodies) expect(b.equals(bodies[0]!)).toBe(true);
    // The five held when the worker died were delivered again.
    expect([...byDelivery.values()].filter((b) => b.length > 1).length).toBeGreaterThanOrEqual(5);

    // ERP: each pushed invoice reached the ERP in one create request and exists there once; every push succeeded.
    for (const d of pushData) {
      const number = String(d.invoice_number);
      expect(erpInvoices(standIn, number)).toHaveLength(1);
      expect(standIn.requests.filter((r) => isInvoiceCreate(r) && r.body.includes(number))).toHaveLength(1);
    }
    const pushRows = await db.query<{ status: string }>(`SELECT status FROM erp_pushes`);
    expect(pushRows.rows.map((r) => r.status)).toEqual(Array(10).fill('succeeded'));

    // Mail: each invitation reached the relay once (the ones held at MAIL FROM were sent again by the new
    // worker, the others by it alone), and the verification mail was not sent again.
    expect(smtp.mails.map((m) => m.to).sort()).toEqual([ownerEmail, ...invitees].sort());
    expect(w2.logs.filter((l) => l.msg === 'mail sent')).toHaveLength(10);

    // Usage, as the customer reads it: 80 documents uploaded, every API call once, and the bytes stored now
    // (the signed files included) equal to the files in the store and to the records.
    const stored = (
      await db.query<{ n: string }>(
        `SELECT COALESCE(SUM(file_size_bytes), 0)::bigint AS n FROM documents WHERE tenant_id = $1`,
        [tenantId],
      )
    ).rows[0]!.n;
    const folder = join(cluster.storageDir, 'tenants', tenantId, 'documents');
    const onDisk = readdirSync(folder)
      .filter((name) => name.endsWith('.sdf'))
      .reduce((sum, name) => sum + statSync(join(folder, name)).size, 0);
    expect(Number(stored)).toBe(onDisk);
    const usage = await api.http().get('/v1/billing/usage').set('X-API-Key', apiKey).expect(200);
    expect(usage.body).toMatchObject({ documents_uploaded: 80, api_calls: calls, storage_bytes: onDisk });
    // The same figures reach the period's row in PostgreSQL.
    await waitUntil(
      async () => {
        const row = (
          await db.query<{ documents_uploaded: string; api_calls: string; storage_bytes: string }>(
            `SELECT documents_uploaded, api_calls, storage_bytes FROM usage_periods WHERE tenant_id = $1`,
            [tenantId],
          )
        ).rows[0];
        return (
          row !== undefined &&
          Number(row.documents_uploaded) === 80 &&
          Number(row.api_calls) === calls &&
          Number(row.storage_bytes) === onDisk
        );
      },
      'the usage flushed to PostgreSQL',
      15_000,
    );
    // Nothing was sent twice while the checks above ran.
    expect(smtp.mails).toHaveLength(11);
  }, 240_000);
});
