import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { createTenant } from './helpers/tenants.js';

describe('structured logs', () => {
  const lines: string[] = [];
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ logSink: (line) => lines.push(line) });
  });
  afterAll(() => t.close());

  it('log one JSON line per request with request id and tenant id, and never a credential or secret', async () => {
    const tenant = await createTenant(t);
    const jwt = t.tenantToken(tenant.id);
    await t.http().get('/tenant').set('X-API-Key', tenant.apiKey).set('X-Request-Id', 'req-with-key').expect(200);
    await t.http().get('/tenant').set('Authorization', `Bearer ${jwt}`).expect(200);
    await t
      .http()
      .get('/tenant')
      .set('X-API-Key', 'sdf_k' + 'Q'.repeat(43))
      .expect(401);

    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const request = parsed.find((l) => l.msg === 'request' && l.request_id === 'req-with-key');
    expect(request).toMatchObject({ level: 'info', method: 'GET', path: '/tenant', status: 200, tenant_id: tenant.id });

    const all = lines.join('\n');
    const secrets = [
      tenant.apiKey,
      tenant.apiKey.slice(8),
      jwt,
      t.adminToken().split('.')[2],
      t.config.secrets.jwtSecret,
      t.config.secrets.adminJwtSecret,
      t.config.env.MASTER_KEY!,
      'Q'.repeat(43),
    ];
    for (const secret of secrets) expect(all).not.toContain(secret);
  });

  it('log the whole path the client asked for, under a mounted router too, without its query', async () => {
    await t.http().get('/admin/queues/dashboard/api/queues?token=one-time-secret').set('X-Request-Id', 'req-mounted');
    await t.http().get('/list?limit=5').set('X-Request-Id', 'req-plain');
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const mounted = parsed.find((l) => l.msg === 'request' && l.request_id === 'req-mounted');
    expect(mounted).toMatchObject({ method: 'GET', path: '/admin/queues/dashboard/api/queues', status: 401 });
    const plain = parsed.find((l) => l.msg === 'request' && l.request_id === 'req-plain');
    expect(plain).toMatchObject({ method: 'GET', path: '/list', status: 401 });
    expect(lines.join('\n')).not.toContain('one-time-secret');
  });
});
