import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppConfig } from '../src/config/app-config.js';
import { startMetricsServer } from '../src/metrics/metrics-server.js';
import { MetricsService } from '../src/metrics/metrics.service.js';
import { EVENT_NAMES } from '../src/events/events.js';
import { startApp, type TestApp } from './helpers/app.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { registerWebhook } from './helpers/events.js';
import { buildInvalidSdf, buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';

const TOKEN = 'metrics-token-0123456789abcdef';

/** The value of one sample line (`name{labels} value`), or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{')) continue;
    const body = line.slice(name.length + 1, line.indexOf('}'));
    const got = body.split(',');
    if (want.every((w) => got.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('Prometheus metrics', () => {
  it('GET /metrics does not exist without a metrics token configured (404)', async () => {
    const t = await startApp();
    try {
      await t.http().get('/metrics').expect(404);
      await t.http().get('/metrics').set('Authorization', `Bearer ${TOKEN}`).expect(404);
    } finally {
      await t.close();
    }
  });

  describe('with METRICS_TOKEN', () => {
    let t: TestApp;
    let tenant: TenantFixture;
    let receiver: WebhookReceiver;
    const scrape = () => t.http().get('/metrics').set('Authorization', `Bearer ${TOKEN}`).expect(200);

    beforeAll(async () => {
      t = await startApp({ env: { METRICS_TOKEN: TOKEN, WEBHOOK_DISPATCH_INTERVAL_MS: '50' } });
      tenant = await createTenant(t);
      receiver = await WebhookReceiver.start(() => 200);
    });
    afterAll(async () => {
      await receiver.close();
      await t.close();
    });

    it('refuses a missing or wrong token (401)', async () => {
      await t.http().get('/metrics').expect(401);
      await t.http().get('/metrics').set('Authorization', `Bearer ${TOKEN}x`).expect(401);
      await t.http().get('/metrics').set('X-API-Key', tenant.apiKey).expect(401);
    });

    it('moves the HTTP, queue, job, validation and webhook metrics after uploads, with no tenant id in any label', async () => {
      const before = (await scrape()).text;
      expect(sample(before, 'sdf_validation_outcomes_total', { outcome: 'valid', code: 'none' })).toBeUndefined();
      expect(before).toContain('process_cpu_user_seconds_total');
      for (const state of ['waiting', 'active', 'delayed', 'failed']) {
        expect(sample(before, 'sdf_queue_jobs', { queue: 'validate-sdf', state })).toBe(0);
      }

      await registerWebhook(t, tenant.apiKey, {
        url: receiver.url(),
        secret: 'whsec-metrics-0123456789',
        events: [...EVENT_NAMES],
      });
      const valid = await upload(t, tenant.apiKey, (await buildSdf()).archive).expect(201);
      const invalid = await upload(t, tenant.apiKey, buildInvalidSdf()).expect(201);
      await waitForFinal(t, tenant.apiKey, valid.body.id);
      const bad = await waitForFinal(t, tenant.apiKey, invalid.body.id);
      const code = bad.body.validation.error.code as string;
      // uploaded + validated for each document; the worker counts a delivery once its job has completed.
      await receiver.waitFor(4);
      const after = await waitUntil(async () => {
        const text = (await scrape()).text;
        return (sample(text, 'sdf_webhook_deliveries_total', { outcome: 'delivered' }) ?? 0) >= 4 ? text : null;
      }, 'four delivered webhooks in the metrics');
      expect(
        sample(after, 'sdf_http_request_duration_seconds_count', { route: '/upload', method: 'POST', status: '201' }),
      ).toBe(2);
      expect(
        sample(after, 'sdf_http_request_duration_seconds_count', { route: '/sdf/:id', method: 'GET', status: '200' }),
      ).toBeGreaterThanOrEqual(2);
      expect(sample(after, 'sdf_validation_outcomes_total', { outcome: 'valid', code: 'none' })).toBe(1);
      expect(sample(after, 'sdf_validation_outcomes_total', { outcome: 'invalid', code })).toBe(1);
      expect(sample(after, 'sdf_job_duration_seconds_count', { queue: 'validate-sdf', outcome: 'completed' })).toBe(2);
      expect(
        sample(after, 'sdf_job_duration_seconds_count', { queue: 'webhook-delivery', outcome: 'completed' }),
      ).toBeGreaterThanOrEqual(4);
      expect(sample(after, 'sdf_webhook_deliveries_total', { outcome: 'delivered' })).toBeGreaterThanOrEqual(4);
      expect(sample(after, 'sdf_queue_jobs', { queue: 'validate-sdf', state: 'waiting' })).toBe(0);
      expect(after).not.toContain(tenant.id);
      expect(after).not.toContain(valid.body.id);
    });
  });

  it('METRICS_PORT: metrics and a health probe on a port of their own, off the API', async () => {
    const t = await startApp({ env: { METRICS_PORT: '0' } });
    const config = { env: { ...t.config.env, HOST: '127.0.0.1' }, version: t.config.version } as AppConfig;
    const server = await startMetricsServer(config, t.app.get(MetricsService));
    try {
      const { port } = server.address() as { port: number };
      await t.http().get('/metrics').expect(404);
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(health.status).toBe(200);
      const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('sdf_queue_jobs{queue="sign-sdf",state="waiting"} 0');
      expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await t.close();
    }
  });
});
