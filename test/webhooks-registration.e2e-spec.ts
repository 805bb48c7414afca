import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CryptoBox } from '../src/common/crypto-box.js';
import { startApp, type TestApp } from './helpers/app.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

const SECRET = 'whsec-0123456789abcdef';

describe('webhook registration (SDF-SPEC Webhook registration, S7, S10, S11)', () => {
  let t: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;

  beforeAll(async () => {
    t = await startApp({ env: { PROCESS_ROLE: 'api' } });
    [a, b] = [await createTenant(t), await createTenant(t)];
  });
  afterAll(() => t.close());

  const admin = () => `Bearer ${t.adminToken()}`;

  it('registers through the tenant API without ever returning the secret; stores it encrypted with its hash', async () => {
    const res = await t
      .http()
      .post('/webhooks')
      .set('X-API-Key', a.apiKey)
      .send({ url: 'http://127.0.0.1:9/hook', secret: SECRET, events: ['document.signed', 'document.validated'] })
      .expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      tenant_id: a.id,
      url: 'http://127.0.0.1:9/hook',
      events: ['document.signed', 'document.validated'],
      is_active: true,
      created_at: expect.any(String),
    });
    expect(JSON.stringify(res.body)).not.toContain(SECRET);

    const [row] = await t.ds.query(`SELECT secret_enc, secret_hash FROM webhooks WHERE id = $1`, [res.body.id]);
    expect(row.secret_enc).not.toContain(SECRET);
    expect(t.app.get(CryptoBox).decryptString(row.secret_enc, `webhook:${res.body.id}`)).toBe(SECRET);
    expect(row.secret_hash).toBe(t.app.get(CryptoBox).keyedHash('webhook-secret', SECRET));

    const list = await t.http().get('/webhooks').set('X-API-Key', a.apiKey).expect(200);
    expect(list.body.webhooks.map((w: { id: string }) => w.id)).toContain(res.body.id);
    expect(JSON.stringify(list.body)).not.toContain(SECRET);
    expect(JSON.stringify(list.body)).not.toContain(row.secret_hash);

    const [audit] = await t.ds.query(
      `SELECT actor, tenant_id FROM audit_log WHERE action = 'webhook.create' AND resource_id = $1`,
      [res.body.id],
    );
    expect(audit).toEqual({ actor: `api_key:${a.keyPrefix}`, tenant_id: a.id });
  });

  it.each([
    ['a secret shorter than 16 characters', { secret: 'short-secret-15' }, '/secret'],
    ['an unknown event name', { events: ['document.uploaded', 'document.exploded'] }, '/events'],
    ['an empty events list', { events: [] }, '/events'],
    ['an ftp URL', { url: 'ftp://example.com/hook' }, '/url'],
    ['a javascript URL', { url: 'javascript:alert(1)' }, '/url'],
    ['a relative URL', { url: '/hook' }, '/url'],
    ['an unknown field', { extra: true }, '/extra'],
  ])('refuses %s with 400 and stores nothing', async (_name, override, path) => {
    const before = await t.ds.query(`SELECT count(*)::int AS n FROM webhooks`);
    const res = await t
      .http()
      .post('/webhooks')
      .set('X-API-Key', a.apiKey)
      .send({ url: 'https://example.com/hook', secret: SECRET, events: ['document.signed'], ...override })
      .expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    expect(await t.ds.query(`SELECT count(*)::int AS n FROM webhooks`)).toEqual(before);
  });

  it('lets an operator register, list and delete webhooks for a tenant, audited', async () => {
    const created = await t
      .http()
      .post(`/admin/tenants/${b.id}/webhooks`)
      .set('Authorization', admin())
      .send({ url: 'https://example.com/b', secret: SECRET, events: ['document.deleted'] })
      .expect(201);
    expect(created.body.tenant_id).toBe(b.id);
    expect(JSON.stringify(created.body)).not.toContain(SECRET);
    const list = await t.http().get(`/admin/tenants/${b.id}/webhooks`).set('Authorization', admin()).expect(200);
    expect(list.body.webhooks.map((w: { id: string }) => w.id)).toEqual([created.body.id]);
    await t.http().delete(`/admin/webhooks/${created.body.id}`).set('Authorization', admin()).expect(204);
    await t.http().delete(`/admin/webhooks/${created.body.id}`).set('Authorization', admin()).expect(404);
    const actions = await t.ds.query(`SELECT action, actor FROM audit_log WHERE resource_id = $1 ORDER BY created_at`, [
      created.body.id,
    ]);
    expect(actions).toEqual([
      { action: 'webhook.create', actor: 'admin:test-operator' },
      { action: 'webhook.delete', actor: 'admin:test-operator' },
    ]);
  });

  it('answers 404 for an unknown tenant and refuses tenant credentials on the admin paths', async () => {
    await t
      .http()
      .post('/admin/tenants/00000000-0000-4000-8000-000000000000/webhooks')
      .set('Authorization', admin())
      .send({ url: 'https://example.com/x', secret: SECRET, events: ['document.signed'] })
      .expect(404);
    await t.http().get(`/admin/tenants/${a.id}/webhooks`).set('X-API-Key', a.apiKey).expect(403);
  });

  it("keeps tenants apart: B neither sees nor deletes A's webhook (404 as if missing)", async () => {
    const id = (
      await t
        .http()
        .post('/webhooks')
        .set('X-API-Key', a.apiKey)
        .send({ url: 'https://example.com/a', secret: SECRET, events: ['document.signed'] })
        .expect(201)
    ).body.id as string;
    const listB = await t.http().get('/webhooks').set('X-API-Key', b.apiKey).expect(200);
    expect(listB.body.webhooks.map((w: { id: string }) => w.id)).not.toContain(id);
    const res = await t.http().delete(`/webhooks/${id}`).set('X-API-Key', b.apiKey).expect(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
    await t.http().delete(`/webhooks/${id}`).set('X-API-Key', a.apiKey).expect(204);
    expect(await t.ds.query(`SELECT id FROM webhooks WHERE id = $1`, [id])).toEqual([]);
  });
});

describe('webhook registration on the managed deployment (S10)', () => {
  let t: TestApp;
  let a: TenantFixture;

  beforeAll(async () => {
    t = await startApp({ env: { PROCESS_ROLE: 'api', DEPLOYMENT_MODE: 'managed' } });
    a = await createTenant(t);
  });
  afterAll(() => t.close());

  it.each([
    'http://127.0.0.1/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/hook',
    'http://[::1]:8080/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://100.100.100.200/hook',
    'http://0.0.0.0/hook',
    'http://localhost:8080/hook',
  ])('refuses %s at registration', async (url) => {
    const res = await t
      .http()
      .post('/webhooks')
      .set('X-API-Key', a.apiKey)
      .send({ url, secret: SECRET, events: ['document.signed'] })
      .expect(400);
    expect(res.body.error.details[0].path).toBe('/url');
    expect(await t.ds.query(`SELECT id FROM webhooks WHERE tenant_id = $1`, [a.id])).toEqual([]);
  });

  it('accepts a public address', async () => {
    await t
      .http()
      .post('/webhooks')
      .set('X-API-Key', a.apiKey)
      .send({ url: 'https://93.184.216.34/hook', secret: SECRET, events: ['document.signed'] })
      .expect(201);
  });
});
