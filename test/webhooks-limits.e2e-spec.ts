import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueName } from '../src/queue/queues.js';
import { startApp, type TestApp } from './helpers/app.js';
import { recordDocumentEvent, registerWebhook } from './helpers/events.js';
import { createTenant } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';

const SECRET = 'whsec-limits-test-secret';

describe('webhook limits: registrations per tenant, failed jobs kept, deliveries shared fairly', () => {
  let t: TestApp;
  let queue: Queue;
  const receivers: WebhookReceiver[] = [];
  const receiver = async (...args: Parameters<typeof WebhookReceiver.start>) => {
    const r = await WebhookReceiver.start(...args);
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    t = await startApp({
      env: {
        WEBHOOK_CONCURRENCY: '4',
        WEBHOOK_TIMEOUT_MS: '4000',
        WEBHOOK_RETRY_BASE_DELAY_MS: '50',
        WEBHOOK_DISPATCH_INTERVAL_MS: '50',
        FAILED_JOB_RETENTION_COUNT: '2',
      },
    });
    queue = t.app.get<Queue>(getQueueToken(QueueName.WebhookDelivery));
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await t.close();
  });

  it('accepts 10 webhooks per tenant and refuses the 11th with 409, also when they are sent at once', async () => {
    const tenant = await createTenant(t, { rate_limit_rpm: 10_000 });
    const body = { url: 'http://127.0.0.1:9/hook', secret: SECRET, events: ['document.signed'] };
    const answers = await Promise.all(
      Array.from({ length: 15 }, () => t.http().post('/webhooks').set('X-API-Key', tenant.apiKey).send(body)),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(10);
    const refused = answers.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(5);
    for (const r of refused) {
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('CONFLICT');
      expect(r.body.error.message).toMatch(/at most 10 webhooks/);
    }
    const [{ n }] = await t.ds.query(`SELECT count(*)::int AS n FROM webhooks WHERE tenant_id = $1`, [tenant.id]);
    expect(n).toBe(10);
    // The admin API counts the same way; deleting one makes room for one.
    await t
      .http()
      .post(`/admin/tenants/${tenant.id}/webhooks`)
      .set('Authorization', `Bearer ${t.adminToken()}`)
      .send(body)
      .expect(409);
    const first = answers.find((r) => r.status === 201)!.body.id as string;
    await t.http().delete(`/webhooks/${first}`).set('X-API-Key', tenant.apiKey).expect(204);
    await t.http().post('/webhooks').set('X-API-Key', tenant.apiKey).send(body).expect(201);
  });

  it("delivers another tenant's event while one tenant's receiver holds its deliveries open", async () => {
    const slow = await createTenant(t);
    const other = await createTenant(t);
    const hanging = await receiver(() => 'hang');
    const quick = await receiver();
    await registerWebhook(t, slow.apiKey, { url: hanging.url(), secret: SECRET, events: ['document.signed'] });
    await registerWebhook(t, other.apiKey, { url: quick.url(), secret: SECRET, events: ['document.signed'] });
    for (let i = 0; i < 8; i++) await recordDocumentEvent(t, slow.id, 'document.signed');
    // The slow tenant's share of the 4 delivery slots is 2: two requests wait on its receiver.
    await hanging.waitFor(2);
    await recordDocumentEvent(t, other.id, 'document.signed');
    await quick.waitFor(1);
    // The other tenant's event went out while every one of the slow tenant's attempts was still open.
    expect(hanging.abortedByClient).toBe(0);
    expect(hanging.received.length).toBe(2);
  });

  it('keeps at most FAILED_JOB_RETENTION_COUNT jobs in the dead-letter set', async () => {
    const tenant = await createTenant(t);
    const failing = await receiver(() => 500);
    await registerWebhook(t, tenant.apiKey, { url: failing.url(), secret: SECRET, events: ['document.deleted'] });
    for (let i = 0; i < 4; i++) await recordDocumentEvent(t, tenant.id, 'document.deleted');
    // Four events, four attempts each: every delivery has failed for good once 16 requests arrived.
    await failing.waitFor(16, 30_000);
    await waitUntil(async () => {
      const rows: { n: number }[] = await t.ds.query(
        `SELECT count(*)::int AS n FROM audit_log WHERE tenant_id = $1 AND action = 'webhook.delivery_failed'`,
        [tenant.id],
      );
      return rows[0]!.n === 4;
    }, 'four dead-lettered deliveries');
    await waitUntil(async () => (await queue.getFailedCount()) === 2, 'the failed set trimmed to 2');
  });
});
