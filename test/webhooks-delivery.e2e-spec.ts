import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EVENT_NAMES } from '../src/events/events.js';
import { QueueName } from '../src/queue/queues.js';
import { startApp, type TestApp } from './helpers/app.js';
import { recordDocumentEvent, registerWebhook } from './helpers/events.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';
import { verifySignature, WebhookReceiver } from './helpers/webhook-receiver.js';

const SECRET = 'whsec-delivery-test-secret';
const BASE_DELAY_MS = 150;
const TIMEOUT_MS = 500;

describe('webhook delivery (SDF-SPEC Events, S9, S10)', () => {
  let t: TestApp;
  let queue: Queue;
  const receivers: WebhookReceiver[] = [];
  const receiver = async (...args: Parameters<typeof WebhookReceiver.start>) => {
    const r = await WebhookReceiver.start(...args);
    receivers.push(r);
    return r;
  };
  const admin = () => `Bearer ${t.adminToken()}`;
  const jobId = (eventId: string, webhookId: string) => `${eventId}_${webhookId}`;
  const auditRows = (action: string, tenantId: string) =>
    t.ds.query(`SELECT resource_id, actor, metadata FROM audit_log WHERE action = $1 AND tenant_id = $2`, [
      action,
      tenantId,
    ]);
  /** Everything in the outbox handed over and no delivery left to run: what was not received never will be. */
  const settled = () =>
    waitUntil(async () => {
      const [{ n }] = await t.ds.query(`SELECT count(*)::int AS n FROM outbox_events WHERE dispatched_at IS NULL`);
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      return n === 0 && Object.values(counts).every((c) => c === 0);
    }, 'the outbox and the delivery queue to drain');

  beforeAll(async () => {
    t = await startApp({
      env: {
        WEBHOOK_RETRY_BASE_DELAY_MS: String(BASE_DELAY_MS),
        WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
        WEBHOOK_DISPATCH_INTERVAL_MS: '50',
      },
    });
    queue = t.app.get<Queue>(getQueueToken(QueueName.WebhookDelivery));
  });
  afterEach(() => vi.restoreAllMocks());
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await t.close();
  });

  it('delivers each event signed over the raw bytes, with the S10 payload and headers', async () => {
    const tenant = await createTenant(t);
    const r = await receiver();
    await registerWebhook(t, tenant.apiKey, { url: r.url(), secret: SECRET, events: [...EVENT_NAMES] });
    const sent = [];
    for (const event of EVENT_NAMES) sent.push(await recordDocumentEvent(t, tenant.id, event));

    const got = await r.waitFor(EVENT_NAMES.length);
    expect(got.map((d) => d.json.event).sort()).toEqual([...EVENT_NAMES].sort());
    for (const d of got) {
      const payload = sent.find((p) => p.id === d.json.id)!;
      expect(verifySignature(SECRET, d.raw, d.headers['x-sdf-signature'])).toBe(true);
      expect(verifySignature('another-secret-of-length', d.raw, d.headers['x-sdf-signature'])).toBe(false);
      expect(d.headers['x-sdf-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
      expect(d.headers['content-type']).toBe('application/json');
      expect(d.headers['x-sdf-event']).toBe(payload.event);
      expect(d.headers['x-sdf-delivery']).toBe(payload.id);
      expect(d.json).toEqual(JSON.parse(JSON.stringify(payload)));
      expect(d.json.document_id).toBe(payload.data.document_id);
      expect(d.json.data.document_id).toBe(payload.document_id);
      expect(d.json.tenant_id).toBe(tenant.id);
    }
  });

  it('keeps tenants apart and delivers only subscribed events', async () => {
    const [a, b] = [await createTenant(t), await createTenant(t)];
    const [all, signedOnly, ofB] = [await receiver(), await receiver(), await receiver()];
    await registerWebhook(t, a.apiKey, { url: all.url(), secret: SECRET, events: [...EVENT_NAMES] });
    await registerWebhook(t, a.apiKey, { url: signedOnly.url(), secret: SECRET, events: ['document.signed'] });
    await registerWebhook(t, b.apiKey, { url: ofB.url(), secret: SECRET, events: [...EVENT_NAMES] });

    for (const event of EVENT_NAMES) await recordDocumentEvent(t, a.id, event);
    const own = await recordDocumentEvent(t, b.id, 'document.uploaded');
    await all.waitFor(EVENT_NAMES.length);
    await settled();

    expect(signedOnly.received.map((d) => d.json.event)).toEqual(['document.signed']);
    expect(ofB.received.map((d) => d.json.id)).toEqual([own.id]);
    expect(ofB.received.every((d) => d.json.tenant_id === b.id)).toBe(true);
  });

  it('delivers nothing to an inactive webhook', async () => {
    const tenant = await createTenant(t);
    const r = await receiver();
    const webhookId = await registerWebhook(t, tenant.apiKey, {
      url: r.url(),
      secret: SECRET,
      events: [...EVENT_NAMES],
    });
    await t.ds.query(`UPDATE webhooks SET is_active = false WHERE id = $1`, [webhookId]);
    await recordDocumentEvent(t, tenant.id, 'document.uploaded');
    await settled();
    expect(r.received).toHaveLength(0);
  });

  it('retries a 500 exactly 4 times on the base, 2x, 4x schedule, dead-letters it, audits once; an admin retry delivers once', async () => {
    const tenant = await createTenant(t);
    const r = await receiver(() => 500);
    const webhookId = await registerWebhook(t, tenant.apiKey, {
      url: r.url(),
      secret: SECRET,
      events: ['document.validated'],
    });
    const event = await recordDocumentEvent(t, tenant.id, 'document.validated');
    const id = jobId(event.id, webhookId);

    const failed = await waitUntil(async () => {
      const res = await t.http().get('/admin/queues/webhook-delivery/failed').set('Authorization', admin()).expect(200);
      return (res.body.jobs as { id: string }[]).find((j) => j.id === id);
    }, 'the delivery to reach the failed set');
    expect(failed).toMatchObject({
      job_id: `webhook-delivery:${id}`,
      name: 'document.validated',
      attempts_made: 4,
      failed_reason: 'HTTP 500',
      data: { tenant_id: tenant.id, webhook_id: webhookId, event_id: event.id, event: 'document.validated' },
    });
    expect(failed).not.toHaveProperty('data.body');

    expect(r.received).toHaveLength(4);
    const gaps = r.received.slice(1).map((d, i) => d.at - r.received[i].at);
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(BASE_DELAY_MS * 2 ** i));
    // Same delivery id and the very same bytes on every attempt.
    expect(new Set(r.received.map((d) => d.headers['x-sdf-delivery']))).toEqual(new Set([event.id]));
    expect(new Set(r.received.map((d) => d.raw.toString('hex'))).size).toBe(1);

    const audits = await auditRows('webhook.delivery_failed', tenant.id);
    expect(audits).toEqual([
      {
        resource_id: webhookId,
        actor: 'system:webhook-delivery',
        metadata: expect.objectContaining({ event_id: event.id, attempts: 4, reason: 'HTTP 500' }),
      },
    ]);

    r.behaviour = () => 200;
    await t
      .http()
      .post(`/admin/queues/webhook-delivery/failed/${id}/retry`)
      .set('Authorization', admin())
      .expect(202)
      .expect((res) => expect(res.body).toEqual({ id, job_id: `webhook-delivery:${id}`, state: 'waiting' }));
    await waitUntil(async () => (await queue.getJobState(id)) === 'completed', 'the retried delivery to complete');
    expect(r.received).toHaveLength(5);
    expect(verifySignature(SECRET, r.received[4].raw, r.received[4].headers['x-sdf-signature'])).toBe(true);
    expect(await auditRows('webhook.delivery_failed', tenant.id)).toHaveLength(1);
    expect(await auditRows('queue.job_retry', tenant.id)).toEqual([
      expect.objectContaining({ actor: 'admin:test-operator', resource_id: `webhook-delivery:${id}` }),
    ]);
    // A job no longer in the failed set cannot be retried again.
    await t.http().post(`/admin/queues/webhook-delivery/failed/${id}/retry`).set('Authorization', admin()).expect(404);
  });

  it('cuts an attempt that gets no answer at the time-out and retries it', async () => {
    const tenant = await createTenant(t);
    const r = await receiver((n) => (n === 0 ? 'hang' : 200));
    const webhookId = await registerWebhook(t, tenant.apiKey, {
      url: r.url(),
      secret: SECRET,
      events: ['document.signed'],
    });
    const event = await recordDocumentEvent(t, tenant.id, 'document.signed');
    const id = jobId(event.id, webhookId);
    await waitUntil(async () => (await queue.getJobState(id)) === 'completed', 'the delivery to complete');
    expect(r.received).toHaveLength(2);
    // The sender closed the first connection itself: the attempt was cut, not answered.
    await waitUntil(() => r.abortedByClient === 1, 'the first connection to be closed by the sender');
    expect(r.received[1].at - r.received[0].at).toBeGreaterThanOrEqual(TIMEOUT_MS);
    expect((await queue.getJob(id))?.attemptsMade).toBe(2);
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const tenant = await createTenant(t);
    const r = await receiver((n) => (n === 0 ? 302 : 204));
    const webhookId = await registerWebhook(t, tenant.apiKey, {
      url: r.url(),
      secret: SECRET,
      events: ['document.deleted'],
    });
    const event = await recordDocumentEvent(t, tenant.id, 'document.deleted');
    await waitUntil(
      async () => (await queue.getJobState(jobId(event.id, webhookId))) === 'completed',
      'the delivery to complete',
    );
    expect(r.received).toHaveLength(2);
    expect(r.received.every((d) => d.headers['x-sdf-event'] === 'document.deleted')).toBe(true);
  });

  it('keeps an event in the outbox while the queue cannot take it, and delivers it afterwards', async () => {
    const tenant = await createTenant(t);
    const r = await receiver();
    await registerWebhook(t, tenant.apiKey, { url: r.url(), secret: SECRET, events: ['document.uploaded'] });
    const addBulk = vi.spyOn(queue, 'addBulk').mockRejectedValue(new Error('Connection is closed.'));
    const event = await recordDocumentEvent(t, tenant.id, 'document.uploaded');
    await waitUntil(() => addBulk.mock.calls.length >= 2, 'two failed dispatch passes');
    const [row] = await t.ds.query(`SELECT dispatched_at FROM outbox_events WHERE id = $1`, [event.id]);
    expect(row.dispatched_at).toBeNull();
    expect(r.received).toHaveLength(0);

    addBulk.mockRestore();
    const [delivered] = await r.waitFor(1);
    expect(delivered.json.id).toBe(event.id);
    await settled();
    expect(r.received).toHaveLength(1);
  });

  it('answers 404 for an unknown queue or a job not in the failed set, and lists any of the three queues', async () => {
    await t.http().get('/admin/queues/nope/failed').set('Authorization', admin()).expect(404);
    await t.http().post('/admin/queues/nope/failed/1/retry').set('Authorization', admin()).expect(404);
    await t.http().post('/admin/queues/sign-sdf/failed/unknown/retry').set('Authorization', admin()).expect(404);
    for (const q of ['validate-sdf', 'sign-sdf']) {
      const res = await t.http().get(`/admin/queues/${q}/failed`).set('Authorization', admin()).expect(200);
      expect(res.body).toEqual({ queue: q, total: 0, jobs: [] });
    }
    await t.http().get('/admin/queues/webhook-delivery/failed?limit=0').set('Authorization', admin()).expect(400);
    const tenant: TenantFixture = await createTenant(t);
    await t.http().get('/admin/queues/webhook-delivery/failed').set('X-API-Key', tenant.apiKey).expect(403);
  });
});

describe('outbox hand-over without waiting for the poll', () => {
  let t: TestApp;
  let r: WebhookReceiver;
  beforeAll(async () => {
    // A poll interval far longer than the test: only the commit notification can start the pass.
    t = await startApp({ env: { WEBHOOK_DISPATCH_INTERVAL_MS: '600000' } });
    r = await WebhookReceiver.start(() => 200);
  });
  afterAll(async () => {
    await r.close();
    await t.close();
  });

  it('dispatches an event as soon as its transaction commits', async () => {
    const tenant = await createTenant(t);
    await registerWebhook(t, tenant.apiKey, { url: r.url(), secret: SECRET, events: ['document.uploaded'] });
    const event = await recordDocumentEvent(t, tenant.id, 'document.uploaded');
    // Seconds, against a poll ten minutes away; on a miss, where the event stopped is part of the failure.
    const [delivered] = await r.waitFor(1, 20_000).catch(async (err: Error) => {
      throw new Error(`${err.message}; ${await whereIs(t, event.id)}`);
    });
    expect(delivered.json.id).toBe(event.id);
  });
});

/** Where an event is on its way: its outbox row and its delivery jobs, in words. */
async function whereIs(t: TestApp, eventId: string): Promise<string> {
  const [row] = await t.ds.query(`SELECT dispatched_at FROM outbox_events WHERE id = $1`, [eventId]);
  const queue = t.app.get<Queue>(getQueueToken(QueueName.WebhookDelivery));
  const jobs = await queue.getJobs(['waiting', 'active', 'delayed', 'prioritized', 'failed', 'completed']);
  const mine = await Promise.all(
    jobs
      .filter((j) => j.data?.event_id === eventId)
      .map(async (j) => `${j.id} ${await j.getState()} attempts=${j.attemptsMade} ${j.failedReason ?? ''}`),
  );
  return `outbox dispatched_at=${row?.dispatched_at ?? 'null'}, jobs: ${mine.join('; ') || 'none'}`;
}
