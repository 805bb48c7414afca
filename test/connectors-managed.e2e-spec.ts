import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ErpGateway } from '../src/connectors/erp-gateway.js';
import { startApp, type TestApp } from './helpers/app.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

const CREDS = { username: 'u', password: 'p' };

describe('connectors on the managed deployment: https only, the address guard on every connection', () => {
  let t: TestApp;
  let tenant: TenantFixture;

  beforeAll(async () => {
    t = await startApp({
      env: { DEPLOYMENT_MODE: 'managed', ERP_TIMEOUT_MS: '500', ERP_HEALTH_INTERVAL_MS: '3600000' },
    });
    tenant = await createTenant(t, { rate_limit_rpm: 100_000 });
  });
  afterAll(() => t.close());

  const configure = (body: Record<string, unknown>) =>
    t
      .http()
      .post('/connectors/configure')
      .set('X-API-Key', tenant.apiKey)
      .send({ erp_type: 'SAP', auth_type: 'basic', credentials: CREDS, ...body });

  it('refuses http, private and loopback addresses, also for an OAuth2 token URL', async () => {
    const http = await configure({ base_url: 'http://erp.example.com' }).expect(400);
    expect(http.body.error.details).toEqual([{ path: '/base_url', message: 'must be https on this deployment' }]);
    await configure({ base_url: 'https://10.1.2.3' }).expect(400);
    await configure({ base_url: 'https://127.0.0.1:8443' }).expect(400);
    await configure({ base_url: 'https://[::ffff:169.254.169.254]' }).expect(400);
    const token = await configure({
      base_url: 'https://93.184.216.34',
      auth_type: 'oauth2',
      credentials: { token_url: 'https://127.0.0.1/token', client_id: 'c', client_secret: 's' },
    }).expect(400);
    expect(token.body.error.details[0].path).toBe('/credentials/token_url');
  });

  it('a name that resolved to a public address when configured and to loopback later is refused at connect', async () => {
    // DNS cannot run here: the connectors' resolver answers as a rebinding name server would.
    const resolver = t.app.get(ErpGateway).resolver;
    let answer = '93.184.216.34';
    const spy = vi
      .spyOn(resolver, 'resolve')
      .mockImplementation(() => Promise.resolve([{ address: answer, family: 4 }]));
    try {
      const res = await configure({ base_url: 'https://erp.test' }).expect(201);
      answer = '127.0.0.1';
      const health = await t.http().get('/connectors/health').set('X-API-Key', tenant.apiKey).expect(200);
      expect(health.body.connectors).toEqual([
        expect.objectContaining({
          id: res.body.id,
          health_status: 'unhealthy',
          reason: expect.stringMatching(/refused.*loopback/),
        }),
      ]);
      expect(spy).toHaveBeenCalledWith('erp.test');
    } finally {
      spy.mockRestore();
    }
  });
});
