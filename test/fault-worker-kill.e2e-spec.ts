import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openArchive } from '../src/sdf/index.js';
import {
  configureBody,
  erpInvoices,
  invoiceData,
  isInvoiceCreate,
  secretsFor,
  startStandIn,
} from './helpers/connectors.js';
import type { ErpStandIn } from './helpers/erp-standin.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { ServiceCluster, type ServiceProcess } from './helpers/service-processes.js';
import { waitUntil } from './helpers/wait.js';
import { verifySignature, WebhookReceiver } from './helpers/webhook-receiver.js';

const OPEN_SCHEMA = { type: 'object', required: ['document_type'] };

describe('a worker killed (SIGKILL) in the middle of validations, signings, webhook deliveries and ERP pushes', () => {
  let cluster: ServiceCluster;
  let api: ServiceProcess;
  let receiver: WebhookReceiver;
  let standIn: ErpStandIn;
  let db: pg.Client;
  const creds = secretsFor('basic');

  beforeAll(async () => {
    cluster = await ServiceCluster.create({
      env: { WEBHOOK_RETRY_BASE_DELAY_MS: '200', UPLOADS_IN_FLIGHT_PER_TENANT: '64' },
      // The first worker waits a minute for a receiver or an ERP that does not answer: it dies first.
      roleEnv: { worker: { WEBHOOK_TIMEOUT_MS: '60000', ERP_TIMEOUT_MS: '60000' } },
    });
    receiver = await WebhookReceiver.start();
    standIn = await startStandIn('SAP', creds);
    api = await cluster.start('api');
    db = new pg.Client({ connectionString: cluster.postgres.url });
    await db.connect();
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await cluster?.remove();
    await receiver?.close();
    await standIn?.stop();
  });

  it('after a new worker starts: every document final, one valid signature each, every event delivered with identical bodies, every push made once', async () => {
    const tenant = await cluster.createTenant(api);
    const key = { 'X-API-Key': tenant.apiKey };
    const secret = randomBytes(24).toString('hex');
    await api
      .http()
      .post('/webhooks')
      .set(key)
      .send({ url: receiver.url(), secret, events: ['document.validated', 'document.signed'] })
      .expect(201);
    const connector = await api
      .http()
      .post('/connectors/configure')
      .set(key)
      .send(configureBody('SAP', standIn, creds));
    expect(connector.status).toBe(201);

    const uploadInvoice = async (data: Record<string, unknown>) => {
      const { archive } = await buildSdf({ data, schema: OPEN_SCHEMA });
      const res = await api.http().post('/upload').set(key).attach('file', archive, 'f.sdf');
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const statusOf = async (ids: string[]) =>
      (await db.query<{ status: string }>(`SELECT status FROM documents WHERE id = ANY($1)`, [ids])).rows;

    // 30 documents valid before the fault: 20 to sign, 10 to push.
    const w1 = await cluster.start('worker');
    const pushData = Array.from({ length: 10 }, () => invoiceData());
    const toPush = await Promise.all(pushData.map((d) => uploadInvoice(d)));
    const toSign = await Promise.all(Array.from({ length: 20 }, () => uploadInvoice(invoiceData())));
    await waitUntil(
      async () => (await statusOf([...toPush, ...toSign])).filter((r) => r.status === 'valid').length === 30,
      '30 documents valid',
      60_000,
    );
    await waitUntil(() => receiver.received.length >= 30, '30 deliveries', 30_000);

    // From here the receiver holds its first five requests unanswered and the ERP accepts its first three
    // invoices without answering: the worker is killed while it waits on them.
    const before = receiver.received.length;
    receiver.behaviour = (n) => (n < before + 5 ? 'hang' : 200);
    standIn.inject(isInvoiceCreate, { acceptThenHang: true }, { acceptThenHang: true }, { acceptThenHang: true });
    const fresh = Array.from({ length: 50 }, () => uploadInvoice(invoiceData()));
    const signs = toSign.map((id) => api.http().post(`/sign/${id}`).set(key));
    const pushes = toPush.map((id) =>
      api.http().post(`/connectors/push-to-erp/${id}`).set(key).send({ connector_id: connector.body.id }),
    );
    const [validating, signed, pushed] = await Promise.all([
      Promise.all(fresh),
      Promise.all(signs),
      Promise.all(pushes),
    ]);
    for (const s of signed) expect(s.status).toBe(202);
    for (const p of pushed) expect(p.status).toBe(202);
    await waitUntil(() => receiver.received.length >= before + 5, 'the worker to be waiting on the receiver', 30_000);
    await waitUntil(
      () => standIn.requests.filter(isInvoiceCreate).length >= 3,
      'the worker to be waiting on the ERP',
      30_000,
    );
    await w1.kill();

    const w2 = await cluster.start('worker');
    const all = [...validating, ...toSign, ...toPush];
    await waitUntil(
      async () => {
        const rows = await statusOf(all);
        const pushesLeft = await db.query(`SELECT 1 FROM erp_pushes WHERE status NOT IN ('succeeded', 'failed')`);
        return (
          rows.every((r) => r.status !== 'pending') &&
          rows.filter((r) => r.status === 'signed').length === 20 &&
          pushesLeft.rowCount === 0
        );
      },
      'every document final, signed and pushed',
      90_000,
    );
    // Taken over, and said so by the worker that took over.
    expect(
      w2.logs.some((l) => l.msg === 'a stalled job was taken over: the worker that held it stopped renewing its lock'),
    ).toBe(true);

    // Documents: 60 valid, 20 signed; each signed one holds one signature that verifies with the tenant's key.
    const counts = await db.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM documents GROUP BY status ORDER BY status`,
    );
    expect(counts.rows).toEqual([
      { status: 'signed', n: 20 },
      { status: 'valid', n: 60 },
    ]);
    for (const id of toSign) {
      const verdict = await api.http().post(`/verify/${id}`).set(key).expect(200);
      expect(verdict.body).toMatchObject({ valid: true, trusted: true });
      const file = await api
        .http()
        .get(`/download/${id}`)
        .set(key)
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
    await waitUntil(
      () => events.rows.every((e) => receiver.received.some((r) => r.headers['x-sdf-delivery'] === e.id)),
      'every event delivered',
      60_000,
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

    // ERP: each pushed invoice exists once in the ERP, and every push succeeded.
    for (const d of pushData) expect(erpInvoices(standIn, String(d.invoice_number))).toHaveLength(1);
    const pushRows = await db.query<{ status: string }>(`SELECT status FROM erp_pushes`);
    expect(pushRows.rows.map((r) => r.status)).toEqual(Array(10).fill('succeeded'));
  }, 240_000);
});
