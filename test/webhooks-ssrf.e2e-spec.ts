import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { QueueName } from '../src/queue/queues.js';
import { WebhookResolver } from '../src/webhooks/ssrf.js';
import { startApp, type TestApp } from './helpers/app.js';
import { recordDocumentEvent, registerWebhook } from './helpers/events.js';
import { createTenant } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';

const SECRET = 'whsec-ssrf-test-secret-1';
const FAST = { WEBHOOK_RETRY_BASE_DELAY_MS: '50', WEBHOOK_DISPATCH_INTERVAL_MS: '50' };

/** The job as stored once it is dead-lettered (read after the move: a copy read before it lacks failedReason). */
async function failedJob(queue: Queue, id: string) {
  await waitUntil(async () => (await queue.getJobState(id)) === 'failed', `delivery ${id} to be dead-lettered`);
  return (await queue.getJob(id))!;
}

describe('SSRF guard at delivery, on the address actually connected to (S10)', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await WebhookReceiver.start(() => 200);
  });
  afterAll(() => receiver.close());

  describe('a name that resolved to a public address at registration and to loopback at delivery', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp({ env: { DEPLOYMENT_MODE: 'managed', ...FAST } });
    });
    afterAll(async () => {
      vi.restoreAllMocks();
      await t.close();
    });

    it('is refused when connecting (DNS rebinding), dead-lettered at once and audited', async () => {
      const tenant = await createTenant(t);
      // DNS cannot run here: the resolver, the one both checks use, answers as a rebinding name server would.
      let answer = '93.184.216.34';
      const resolver = t.app.get(WebhookResolver);
      const resolve = vi
        .spyOn(resolver, 'resolve')
        .mockImplementation((host) =>
          host === 'rebind.test'
            ? Promise.resolve([{ address: answer, family: 4 }])
            : Promise.reject(new Error(`unexpected lookup ${host}`)),
        );
      const webhookId = await registerWebhook(t, tenant.apiKey, {
        url: receiver.url('/hook', 'rebind.test'),
        secret: SECRET,
        events: ['document.signed'],
      });
      expect(resolve).toHaveBeenCalledWith('rebind.test');

      answer = '127.0.0.1';
      const event = await recordDocumentEvent(t, tenant.id, 'document.signed');
      const job = await failedJob(
        t.app.get<Queue>(getQueueToken(QueueName.WebhookDelivery)),
        `${event.id}_${webhookId}`,
      );
      expect(job.failedReason).toContain('127.0.0.1');
      expect(job.attemptsMade).toBe(1);
      expect(receiver.received).toHaveLength(0);
      const audit = await t.ds.query(
        `SELECT metadata FROM audit_log WHERE action = 'webhook.delivery_failed' AND tenant_id = $1`,
        [tenant.id],
      );
      expect(audit).toHaveLength(1);
      expect(audit[0].metadata.reason).toContain('loopback');
    });
  });

  describe('IPv6 forms that embed a refused IPv4 address', () => {
    // ::/96, 6to4 and Teredo (client 127.0.0.1 stored inverted in the last 32 bits).
    const EMBEDDED = ['::127.0.0.1', '::a9fe:a9fe', '2002:7f00:1::', '2001:0:4136:e378:8000:63bf:80ff:fffe'];
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp({ env: { DEPLOYMENT_MODE: 'managed', ...FAST } });
    });
    afterAll(async () => {
      vi.restoreAllMocks();
      await t.close();
    });

    it.each(EMBEDDED)('refuses the literal [%s] at registration', async (address) => {
      const tenant = await createTenant(t);
      const res = await t
        .http()
        .post('/webhooks')
        .set('X-API-Key', tenant.apiKey)
        .send({ url: `https://[${address}]/hook`, secret: SECRET, events: ['document.signed'] });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body.error)).toMatch(/loopback|linkLocal/);
      const rows = await t.ds.query(`SELECT id FROM webhooks WHERE tenant_id = $1`, [tenant.id]);
      expect(rows).toHaveLength(0);
    });

    it.each(EMBEDDED)('refuses a name resolving to %s when connecting', async (address) => {
      const tenant = await createTenant(t);
      let answer = { address: '93.184.216.34', family: 4 };
      vi.spyOn(t.app.get(WebhookResolver), 'resolve').mockImplementation((host) =>
        host === 'embedded.test' ? Promise.resolve([answer]) : Promise.reject(new Error(`unexpected lookup ${host}`)),
      );
      const webhookId = await registerWebhook(t, tenant.apiKey, {
        url: receiver.url('/hook', 'embedded.test'),
        secret: SECRET,
        events: ['document.signed'],
      });
      answer = { address, family: 6 };
      const event = await recordDocumentEvent(t, tenant.id, 'document.signed');
      const job = await failedJob(
        t.app.get<Queue>(getQueueToken(QueueName.WebhookDelivery)),
        `${event.id}_${webhookId}`,
      );
      expect(job.failedReason).toMatch(/is not allowed \((loopback|linkLocal)\)/);
      expect(job.attemptsMade).toBe(1);
      expect(receiver.received).toHaveLength(0);
      vi.restoreAllMocks();
    });
  });

  describe('targets registered where private addresses were allowed, delivered by a managed worker', () => {
    let api: TestApp;
    let worker: TestApp;
    beforeAll(async () => {
      // A self-hosted API process accepts the targets; the managed worker sharing its database refuses them.
      api = await startApp({ env: { PROCESS_ROLE: 'api', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
      worker = await startApp({ shareWith: api, env: { PROCESS_ROLE: 'worker', DEPLOYMENT_MODE: 'managed', ...FAST } });
    });
    afterAll(async () => {
      await worker.close();
      await api.close();
    });

    it.each([
      ['a loopback literal', () => receiver.url('/hook', '127.0.0.1')],
      ['a host name resolving to loopback', () => receiver.url('/hook', 'localhost')],
      ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
      ['a private address', () => 'http://10.0.0.1/hook'],
      ['loopback in an IPv4-compatible IPv6 literal', () => 'http://[::127.0.0.1]/hook'],
      ['loopback in a 6to4 literal', () => 'http://[2002:7f00:1::]/hook'],
    ])('refuses %s at delivery', async (_name, url) => {
      const tenant = await createTenant(api);
      const webhookId = await registerWebhook(api, tenant.apiKey, {
        url: url(),
        secret: SECRET,
        events: ['document.deleted'],
      });
      const event = await recordDocumentEvent(api, tenant.id, 'document.deleted');
      const job = await failedJob(
        worker.app.get<Queue>(getQueueToken(QueueName.WebhookDelivery)),
        `${event.id}_${webhookId}`,
      );
      expect(job.failedReason).toMatch(/is not allowed \((loopback|linkLocal|private)\)/);
      expect(job.attemptsMade).toBe(1);
      expect(receiver.received).toHaveLength(0);
    });
  });
});
