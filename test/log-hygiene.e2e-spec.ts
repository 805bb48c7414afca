import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_NAMES } from '../src/events/events.js';
import { startApp, type TestApp } from './helpers/app.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { registerWebhook } from './helpers/events.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';

const WEBHOOK_SECRET = 'whsec-log-hygiene-0123456789abcdef';

/**
 * Every log line of a run through the credential-bearing paths (admin token use, API key and tenant
 * JWT use, upload, sign, webhook registration with a secret and its deliveries, refused credentials)
 * is captured and searched for each credential and secret of the run.
 */
describe('log hygiene and security headers', () => {
  let t: TestApp;
  let tenant: TenantFixture;
  let receiver: WebhookReceiver;
  const lines: string[] = [];

  beforeAll(async () => {
    t = await startApp({ logSink: (line) => lines.push(line), env: { WEBHOOK_DISPATCH_INTERVAL_MS: '50' } });
    tenant = await createTenant(t);
    receiver = await WebhookReceiver.start(() => 200);
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('no log line holds an API key, a bearer token or a secret', async () => {
    const adminJwt = t.adminToken();
    const tenantJwt = t.tenantToken(tenant.id);
    await t.http().get(`/admin/tenants/${tenant.id}`).set('Authorization', `Bearer ${adminJwt}`).expect(200);
    await registerWebhook(t, tenant.apiKey, { url: receiver.url(), secret: WEBHOOK_SECRET, events: [...EVENT_NAMES] });
    const uploaded = await upload(t, tenant.apiKey, (await buildSdf()).archive).expect(201);
    await waitForFinal(t, tenant.apiKey, uploaded.body.id);
    await t.http().post(`/sign/${uploaded.body.id}`).set('Authorization', `Bearer ${tenantJwt}`).expect(202);
    await waitUntil(
      async () =>
        lines.some((l) => l.includes('"msg":"signed"')) &&
        lines.filter((l) => l.includes('"msg":"webhook delivered"')).length >= 3,
      'signing and three webhook deliveries',
      30_000,
    );
    // Refused credentials are logged as refusals, not as the credential.
    await t.http().get('/tenant').set('Authorization', `Bearer ${tenantJwt}x`).expect(401);
    await t.http().get('/tenant').set('X-API-Key', `${tenant.apiKey}x`).expect(401);
    await t.http().get('/admin/tenants/x').set('Authorization', `Bearer ${adminJwt}`).expect(400);

    expect(lines.length).toBeGreaterThan(10);
    expect(lines.some((l) => l.includes('"path":"/upload"'))).toBe(true);
    const all = lines.join('\n');
    const credentials = {
      apiKey: tenant.apiKey,
      apiKeySecretPart: tenant.apiKey.slice(8),
      tenantJwt,
      tenantJwtSignature: tenantJwt.split('.')[2],
      adminJwt,
      adminJwtSignature: adminJwt.split('.')[2],
      jwtSecret: t.config.secrets.jwtSecret,
      adminJwtSecret: t.config.secrets.adminJwtSecret,
      masterKey: t.config.env.MASTER_KEY!,
      webhookSecret: WEBHOOK_SECRET,
    };
    for (const [name, value] of Object.entries(credentials)) {
      expect(all.includes(value), `${name} appears in the logs`).toBe(false);
    }
    expect(all).not.toMatch(/sdf_k[A-Za-z0-9_-]{20,}/);
    expect(all).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/);
  });

  it('answers with helmet security headers', async () => {
    const res = await t.http().get('/health').expect(200);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(res.headers['strict-transport-security']).toMatch(/max-age=/);
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-powered-by']).toBeUndefined();
    const tenantRoute = await t.http().get('/tenant').set('X-API-Key', tenant.apiKey).expect(200);
    expect(tenantRoute.headers['x-content-type-options']).toBe('nosniff');
  });
});
