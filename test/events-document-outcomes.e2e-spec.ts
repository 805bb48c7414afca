import type { AddressInfo } from 'node:net';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPEC_EVENT_NAMES, type EventPayload } from '../src/events/events.js';
import { QueueName } from '../src/queue/queues.js';
import { SignSdfProcessor } from '../src/signing/jobs/sign-sdf.processor.js';
import { deliveryJobId } from '../src/webhooks/jobs/delivery-job.js';
import { startApp, type TestApp } from './helpers/app.js';
import {
  configureBody,
  invoiceData,
  isInvoiceCreate,
  secretsFor,
  startStandIn,
  validInvoice,
  waitForPush,
} from './helpers/connectors.js';
import type { ErpStandIn } from './helpers/erp-standin.js';
import { registerWebhook } from './helpers/events.js';
import { StreamClient } from './helpers/sse.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';

const SECRET = 'a-secret-of-enough-length-123';

/**
 * The service's own document events beyond the specification's four: `document.signing_failed` when a
 * signing ends for good without signing, `document.erp_pushed` when an ERP push finishes. Both come on the
 * event stream with the webhook's body, and go to webhooks that name them and to no other.
 */
describe('document.signing_failed and document.erp_pushed', () => {
  let t: TestApp;
  let base: string;
  let tenant: TenantFixture;
  /** One receiver per webhook, each subscribed to other events. */
  const receivers: Record<'failed' | 'signed' | 'erp' | 'spec', WebhookReceiver> = {} as never;
  const webhooks: Record<keyof typeof receivers, string> = {} as never;
  const streams: StreamClient[] = [];
  const standIns: ErpStandIn[] = [];
  let deliveries: Queue;

  const open = async (query = '') => {
    const s = await StreamClient.open(`${base}/events${query}`, { 'X-API-Key': tenant.apiKey });
    streams.push(s);
    expect(s.status, s.body).toBe(200);
    await s.until((c) => c.retry !== undefined, 'the stream to open');
    return s;
  };
  const bodies = (s: StreamClient, event: string) =>
    s
      .events()
      .filter((e) => e.event === event)
      .map((e) => ({ raw: e.data, body: JSON.parse(e.data) as EventPayload }));

  /**
   * Whom the dispatcher handed the event to: once its outbox row is dispatched, every delivery job it
   * makes exists (they are enqueued before the row is marked), so an absent job is a delivery never made.
   */
  async function deliveredTo(eventId: string): Promise<(keyof typeof receivers)[]> {
    await waitUntil(
      async () =>
        (
          (await t.ds.query(`SELECT dispatched_at FROM outbox_events WHERE id = $1`, [eventId])) as {
            dispatched_at: Date | null;
          }[]
        )[0]?.dispatched_at,
      `event ${eventId} dispatched`,
      30_000,
    );
    const names = Object.keys(webhooks) as (keyof typeof receivers)[];
    const jobs = await Promise.all(names.map((n) => deliveries.getJob(deliveryJobId(eventId, webhooks[n]))));
    return names.filter((_, i) => jobs[i] !== undefined);
  }

  beforeAll(async () => {
    t = await startApp({
      env: {
        WEBHOOK_DISPATCH_INTERVAL_MS: '50',
        // One ERP call per job attempt, so a 503 costs an attempt and the job is retried.
        ERP_TIMEOUT_MS: '2000',
        ERP_RETRY_ATTEMPTS: '1',
        ERP_PUSH_ATTEMPTS: '3',
        ERP_PUSH_RETRY_BASE_DELAY_MS: '100',
        ERP_HEALTH_INTERVAL_MS: '3600000',
      },
    });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    tenant = await createTenant(t, { rate_limit_rpm: 100_000 });
    deliveries = t.app.get<Queue>(getQueueToken(QueueName.WebhookDelivery));
    const subscriptions: Record<keyof typeof receivers, string[]> = {
      failed: ['document.signing_failed'],
      signed: ['document.signed'],
      erp: ['document.erp_pushed'],
      spec: [...SPEC_EVENT_NAMES],
    };
    for (const [name, events] of Object.entries(subscriptions) as [keyof typeof receivers, string[]][]) {
      receivers[name] = await WebhookReceiver.start(() => 200);
      webhooks[name] = await registerWebhook(t, tenant.apiKey, { url: receivers[name].url(), secret: SECRET, events });
    }
  });
  afterAll(async () => {
    await Promise.all(streams.map((s) => s.close()));
    await Promise.all(standIns.map((s) => s.stop()));
    await Promise.all(Object.values(receivers).map((r) => r.close()));
    await t?.close();
  });

  it('a webhook lists them, and the stream filters by them; another name stays refused', async () => {
    const listed = await t.http().get('/webhooks').set('X-API-Key', tenant.apiKey).expect(200);
    const events = (listed.body.webhooks as { id: string; events: string[] }[]).map((w) => [w.id, w.events]);
    expect(Object.fromEntries(events)).toEqual({
      [webhooks.failed]: ['document.signing_failed'],
      [webhooks.signed]: ['document.signed'],
      [webhooks.erp]: ['document.erp_pushed'],
      [webhooks.spec]: [...SPEC_EVENT_NAMES],
    });
    const refused = await t
      .http()
      .post('/webhooks')
      .set('X-API-Key', tenant.apiKey)
      .send({ url: receivers.spec.url(), secret: SECRET, events: ['document.pushed'] })
      .expect(400);
    expect(refused.body.error.details[0].message).toContain('document.erp_pushed');
    const badType = await StreamClient.open(`${base}/events?types=document.signing_failed,document.pushed`, {
      'X-API-Key': tenant.apiKey,
    });
    streams.push(badType);
    expect(badType.status).toBe(400);
  });

  it('a signing refused for want of an active key: document.signing_failed with the reason, to its subscriber only', async () => {
    const all = await open();
    const only = await open('?types=document.signing_failed');
    const id = await validInvoice(t, tenant.apiKey);
    const worker = t.app.get(SignSdfProcessor, { strict: false }).worker;
    // The request finds the key; by the time the job runs the tenant has none.
    await worker.pause();
    try {
      await t.http().post(`/sign/${id}`).set('X-API-Key', tenant.apiKey).expect(202);
      await t.ds.query(`UPDATE signing_keys SET is_active = false WHERE tenant_id = $1`, [tenant.id]);
    } finally {
      void worker.resume();
    }
    await all.until((s) => bodies(s, 'document.signing_failed').length === 1, 'document.signing_failed');
    const [{ raw, body }] = bodies(all, 'document.signing_failed');
    expect(body).toMatchObject({
      event: 'document.signing_failed',
      tenant_id: tenant.id,
      data: { id, status: 'valid', code: 'INVALID_STATE', attempts: 1 },
    });
    expect(body.document_id).toBe(body.data.document_id);
    expect(body.data.reason).toBe(
      'The tenant has no active signing key; create one with POST /admin/tenants/:tenantId/signing-keys',
    );
    // Refused at once: one attempt, and the record says the same as the event.
    const record = await t.http().get(`/sdf/${id}`).set('X-API-Key', tenant.apiKey).expect(200);
    expect(record.body.signing_error).toMatchObject({ code: 'INVALID_STATE', message: body.data.reason, attempts: 1 });
    expect(all.events().map((e) => e.event)).toEqual([
      'document.uploaded',
      'document.validated',
      'document.signing_failed',
    ]);

    await only.until((s) => s.events().length === 1, 'the filtered stream');
    expect(only.events().map((e) => e.data)).toEqual([raw]);

    // Delivered to the webhook that names it, byte for byte the stream's body; to no other.
    expect(await deliveredTo(body.id)).toEqual(['failed']);
    const [delivery] = await receivers.failed.waitFor(1, 30_000);
    expect(delivery.headers['x-sdf-event']).toBe('document.signing_failed');
    expect(delivery.raw.toString()).toBe(raw);
    expect(receivers.signed.received.map((d) => d.json.event)).not.toContain('document.signing_failed');
    expect(receivers.spec.received.map((d) => d.json.event)).not.toContain('document.signing_failed');

    await t.ds.query(`UPDATE signing_keys SET is_active = true WHERE tenant_id = $1`, [tenant.id]);
    await Promise.all([all.close(), only.close()]);
  });

  it('a signing whose last attempt failed: document.signing_failed says so in the tenant’s words, no internals', async () => {
    const stream = await open('?types=document.signing_failed,document.signed');
    const id = await validInvoice(t, tenant.apiKey);
    // A sealed key that no longer authenticates: every attempt fails, the third for good.
    const [{ private_key_enc: sealed }] = (await t.ds.query(
      `SELECT private_key_enc FROM signing_keys WHERE tenant_id = $1 AND is_active`,
      [tenant.id],
    )) as { private_key_enc: string }[];
    await t.ds.query(`UPDATE signing_keys SET private_key_enc = private_key_enc || 'x' WHERE tenant_id = $1`, [
      tenant.id,
    ]);
    try {
      await t.http().post(`/sign/${id}`).set('X-API-Key', tenant.apiKey).expect(202);
      await stream.until((s) => s.events().length === 1, 'document.signing_failed', 60_000);
    } finally {
      await t.ds.query(`UPDATE signing_keys SET private_key_enc = $2 WHERE tenant_id = $1 AND is_active`, [
        tenant.id,
        sealed,
      ]);
    }
    const [{ body }] = bodies(stream, 'document.signing_failed');
    expect(body.data).toMatchObject({ id, status: 'valid', code: 'SIGNING_FAILED', attempts: 3 });
    expect(body.data.reason).toBe('Signing failed after 3 attempts; POST /sign/:id tries again');
    expect(await deliveredTo(body.id)).toEqual(['failed']);

    // Signed once the key is whole again: document.signed follows, for its own subscribers.
    await t.http().post(`/sign/${id}`).set('X-API-Key', tenant.apiKey).expect(202);
    await stream.until((s) => s.events().length === 2, 'document.signed', 60_000);
    const [signed] = bodies(stream, 'document.signed');
    expect(signed.body.data).toMatchObject({ id, status: 'signed' });
    expect(await deliveredTo(signed.body.id)).toEqual(['signed', 'spec']);
    await stream.close();
  });

  it('an ERP push: one document.erp_pushed when it finishes, succeeded (after a retried attempt) or failed', async () => {
    const sapCreds = secretsFor('basic');
    const oracleCreds = secretsFor('bearer');
    const sap = await startStandIn('SAP', sapCreds);
    const oracle = await startStandIn('ORACLE', oracleCreds);
    standIns.push(sap, oracle);
    const configure = async (erp: 'SAP' | 'ORACLE', standIn: ErpStandIn, creds: typeof sapCreds) =>
      (
        await t
          .http()
          .post('/connectors/configure')
          .set('X-API-Key', tenant.apiKey)
          .send(configureBody(erp, standIn, creds))
          .expect(201)
      ).body.id as string;
    const sapId = await configure('SAP', sap, sapCreds);
    const oracleId = await configure('ORACLE', oracle, oracleCreds);
    const stream = await open('?types=document.erp_pushed');
    const id = await validInvoice(t, tenant.apiKey, invoiceData());
    const push = async (connectorId: string) =>
      (
        await t
          .http()
          .post(`/sdf/${id}/push-to-erp`)
          .set('X-API-Key', tenant.apiKey)
          .send({ connector_id: connectorId })
          .expect(202)
      ).body.push_id as string;

    // SAP: the first attempt meets a 503 and is retried; only the finished push makes an event.
    sap.inject(isInvoiceCreate, { status: 503 });
    const sapPush = await waitForPush(t, tenant.apiKey, await push(sapId));
    expect(sapPush).toMatchObject({ status: 'succeeded', attempts: 2 });
    await stream.until((s) => s.events().length === 1, 'the SAP push event');
    // Oracle refuses the document for good.
    oracle.inject(isInvoiceCreate, {
      status: 400,
      body: {
        title: 'Bad Request',
        status: '400',
        'o:errorDetails': [{ detail: 'Posting period 2026/03 is closed', 'o:errorCode': 'AP-1' }],
      },
    });
    const oraclePush = await waitForPush(t, tenant.apiKey, await push(oracleId));
    expect(oraclePush).toMatchObject({ status: 'failed', attempts: 1 });
    await stream.until((s) => s.events().length === 2, 'the Oracle push event');

    const events = bodies(stream, 'document.erp_pushed').map((e) => e.body);
    expect(events).toHaveLength(2);
    expect(events[0].data).toMatchObject({
      id,
      status: 'valid',
      push_id: sapPush.push_id,
      connector_id: sapId,
      erp_type: 'SAP',
      outcome: 'succeeded',
      erp_document_id: sapPush.erp_document_id,
      reason: null,
    });
    expect(typeof events[0].data.erp_document_id).toBe('string');
    expect(events[1].data).toMatchObject({
      id,
      push_id: oraclePush.push_id,
      connector_id: oracleId,
      erp_type: 'ORACLE',
      outcome: 'failed',
      erp_document_id: null,
      reason: oraclePush.error,
    });
    expect(events[1].data.reason).toContain('Posting period 2026/03 is closed');
    // No credential of either connector travels with the event.
    for (const secret of [...Object.values(sapCreds), ...Object.values(oracleCreds)]) {
      if (secret.length > 8) expect(JSON.stringify(events)).not.toContain(secret);
    }
    for (const e of events) expect(await deliveredTo(e.id)).toEqual(['erp']);
    const got = await receivers.erp.waitFor(2, 30_000);
    expect(got.map((d) => d.json.id).sort()).toEqual(events.map((e) => e.id).sort());
    await stream.close();
  });
});
