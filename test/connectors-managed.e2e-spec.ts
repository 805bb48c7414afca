import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ErpGateway } from '../src/connectors/erp-gateway.js';
import { startApp, type TestApp } from './helpers/app.js';
import { startStandIn } from './helpers/connectors.js';
import type { ErpStandIn } from './helpers/erp-standin.js';
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

describe("managed connectors to a private ERP: the operator's per-tenant list of non-public targets", () => {
  let t: TestApp;
  let tenant: TenantFixture;
  let other: TenantFixture;
  let sap: ErpStandIn;
  const SAP_CREDS = { auth_type: 'basic' as const, username: 'erp-user', password: 'erp-password' };

  beforeAll(async () => {
    t = await startApp({
      env: { DEPLOYMENT_MODE: 'managed', ERP_TIMEOUT_MS: '2000', ERP_HEALTH_INTERVAL_MS: '3600000' },
    });
    tenant = await createTenant(t, { rate_limit_rpm: 100_000 });
    other = await createTenant(t, { rate_limit_rpm: 100_000 });
    sap = await startStandIn('SAP', SAP_CREDS);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await sap.stop();
    await t.close();
  });

  const setTargets = (tenantId: string, targets: string[]) =>
    t
      .http()
      .put(`/admin/tenants/${tenantId}/connector-private-targets`)
      .set('Authorization', `Bearer ${t.adminToken()}`)
      .send({ targets });
  const configure = (who: TenantFixture, baseUrl: string) =>
    t
      .http()
      .post('/connectors/configure')
      .set('X-API-Key', who.apiKey)
      .send({
        erp_type: 'SAP',
        auth_type: 'basic',
        credentials: { username: SAP_CREDS.username, password: SAP_CREDS.password },
        base_url: baseUrl,
      });
  const health = async (who: TenantFixture) =>
    (await t.http().get('/connectors/health').set('X-API-Key', who.apiKey).expect(200)).body.connectors as {
      id: string;
      health_status: string;
      reason: string | null;
    }[];

  it('is set by the operator alone: tenant credentials 403, none 401, and a bad entry 400', async () => {
    const path = `/admin/tenants/${tenant.id}/connector-private-targets`;
    await t
      .http()
      .put(path)
      .send({ targets: ['127.0.0.1/32'] })
      .expect(401);
    const forbidden = await t
      .http()
      .put(path)
      .set('X-API-Key', tenant.apiKey)
      .send({ targets: ['127.0.0.1/32'] });
    expect(forbidden.status).toBe(403);
    const bad = await setTargets(tenant.id, ['10.0.0.0/16', 'not a host', '0.0.0.0/0']).expect(400);
    expect(bad.body.error.details.map((d: { path: string }) => d.path)).toEqual(['/targets/1', '/targets/2']);
    const rows = await t.ds.query(`SELECT connector_private_targets FROM tenants WHERE id = $1`, [tenant.id]);
    expect(rows[0].connector_private_targets).toEqual([]);
  });

  it('lets a connector reach a listed address (a health check reaches the stand-in); refuses one outside', async () => {
    // Without the list the stand-in on loopback is refused, as before.
    await configure(tenant, sap.url).expect(400);
    const set = await setTargets(tenant.id, ['127.0.0.1/32', 'erp.corp.internal']).expect(200);
    expect(set.body.connector_private_targets).toEqual(['127.0.0.1/32', 'erp.corp.internal']);
    const audit = await t.ds.query(
      `SELECT actor, metadata FROM audit_log WHERE action = 'tenant.connector_private_targets' AND tenant_id = $1`,
      [tenant.id],
    );
    expect(audit).toEqual([
      {
        actor: expect.stringMatching(/^admin/),
        metadata: { before: [], after: ['127.0.0.1/32', 'erp.corp.internal'] },
      },
    ]);

    // Outside the list: still refused.
    const outside = await configure(tenant, 'https://10.1.2.3').expect(400);
    expect(outside.body.error.details[0].message).toMatch(/non-public address \(private\)/);
    // Another tenant's connectors are not covered by this tenant's list.
    await configure(other, sap.url).expect(400);

    const created = await configure(tenant, sap.url).expect(201);
    const seen = sap.requests.length;
    const [connector] = await health(tenant);
    expect(connector).toMatchObject({ id: created.body.id, health_status: 'healthy', reason: null });
    expect(sap.requests.length).toBeGreaterThan(seen);
  });

  it('checks the list again on the address each connection resolves to', async () => {
    // DNS cannot run here: the connectors' resolver stands in for it.
    const resolver = t.app.get(ErpGateway).resolver;
    let answer = '127.0.0.1';
    vi.spyOn(resolver, 'resolve').mockImplementation((host) =>
      host === 'erp.inside.test'
        ? Promise.resolve([{ address: answer, family: 4 }])
        : Promise.reject(new Error(`unexpected lookup ${host}`)),
    );
    const solo = await createTenant(t, { rate_limit_rpm: 100_000 });
    await setTargets(solo.id, ['127.0.0.0/8']).expect(200);
    const created = await configure(solo, `http://erp.inside.test:${sap.port}`).expect(201);
    expect((await health(solo))[0]).toMatchObject({ id: created.body.id, health_status: 'healthy' });

    // The name now resolves outside the listed network: refused when connecting.
    answer = '169.254.169.254';
    await t.ds.query(`UPDATE connectors SET last_health_check = NULL WHERE id = $1`, [created.body.id]);
    expect((await health(solo))[0]).toMatchObject({
      health_status: 'unhealthy',
      reason: expect.stringMatching(/refused.*linkLocal/),
    });
    vi.restoreAllMocks();
  });
});
