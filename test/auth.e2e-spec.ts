import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeysService } from '../src/auth/api-keys.service.js';
import { TenantsRepository } from '../src/tenants/tenants.repository.js';
import { startApp, type TestApp } from './helpers/app.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

const now = () => Math.floor(Date.now() / 1000);

/** A tenant-secret token with exactly these claims (iat defaults to now). */
function rawToken(t: TestApp, claims: Record<string, unknown>): string {
  return jwt.sign({ iat: now(), ...claims }, t.config.secrets.jwtSecret, { algorithm: 'HS256' });
}

function expectErrorBody(body: unknown, code: string) {
  expect(body).toEqual({ error: { code, message: expect.any(String), details: expect.any(Array) } });
}

describe('authentication (SDF-SPEC Authentication, S6)', () => {
  let t: TestApp;
  let tenant: TenantFixture;

  beforeAll(async () => {
    t = await startApp({ env: { AUTH_FAILURE_LIMIT: '1000' } });
    tenant = await createTenant(t);
  });
  afterAll(() => t.close());

  it('serves a tenant request with a valid API key and with a valid tenant JWT', async () => {
    const byKey = await t.http().get('/tenant').set('X-API-Key', tenant.apiKey).expect(200);
    expect(byKey.body.tenant.id).toBe(tenant.id);
    expect(byKey.body.credential).toEqual({ kind: 'api_key', actor: `api_key:${tenant.keyPrefix}` });
    const byJwt = await t
      .http()
      .get('/tenant')
      .set('Authorization', `Bearer ${t.tenantToken(tenant.id, 'user-42')}`)
      .expect(200);
    expect(byJwt.body.credential).toEqual({ kind: 'tenant_jwt', actor: 'user:user-42' });
  });

  it('gives a JWT subject an actor that cannot pass for an API key or an operator', async () => {
    for (const sub of [`api_key:${tenant.keyPrefix}`, 'admin:operator']) {
      const res = await t
        .http()
        .get('/tenant')
        .set('Authorization', `Bearer ${t.tenantToken(tenant.id, sub)}`)
        .expect(200);
      expect(res.body.credential.actor).toBe(`user:${sub}`);
    }
  });

  const unauthorized: [
    string,
    (t: TestApp, tenant: TenantFixture) => Record<string, string> | Promise<Record<string, string>>,
  ][] = [
    ['no credentials', () => ({})],
    ['a wrong key of the right shape', () => ({ 'X-API-Key': 'sdf_k' + 'A'.repeat(43) })],
    [
      'a key with a known prefix but wrong secret part',
      (_t, f) => ({ 'X-API-Key': f.apiKey.slice(0, 8) + 'B'.repeat(40) }),
    ],
    ['a malformed key', () => ({ 'X-API-Key': 'not-a-key' })],
    ['a malformed Authorization header', () => ({ Authorization: 'Basic abc' })],
    [
      'a JWT with a bad signature',
      (_t, f) => ({
        Authorization: `Bearer ${jwt.sign({ tenant_id: f.id }, 'x'.repeat(40), { subject: 'u', expiresIn: 60 })}`,
      }),
    ],
    ['an expired JWT', (t, f) => ({ Authorization: `Bearer ${t.tenantToken(f.id, 'u', -30)}` })],
    [
      'a JWT whose tenant does not exist',
      (t) => ({ Authorization: `Bearer ${t.tenantToken('00000000-0000-4000-8000-000000000000')}` }),
    ],
    ['a JWT whose tenant_id is not a UUID', (t) => ({ Authorization: `Bearer ${t.tenantToken('nope')}` })],
    [
      'a JWT signed with alg none',
      (_t, f) => ({ Authorization: `Bearer ${jwt.sign({ tenant_id: f.id, sub: 'u' }, '', { algorithm: 'none' })}` }),
    ],
    [
      'a JWT whose lifetime has no bound (exp 1e300)',
      (t, f) => ({ Authorization: `Bearer ${rawToken(t, { tenant_id: f.id, sub: 'u', exp: 1e300 })}` }),
    ],
    [
      'a JWT that lives longer than the configured 8 hours',
      (t, f) => ({ Authorization: `Bearer ${t.tenantToken(f.id, 'u', 8 * 3600 + 3600)}` }),
    ],
    [
      'a JWT issued in the future',
      (t, f) => ({
        Authorization: `Bearer ${rawToken(t, { tenant_id: f.id, sub: 'u', iat: now() + 3600, exp: now() + 7200 })}`,
      }),
    ],
    ['a JWT whose sub holds a NUL', (t, f) => ({ Authorization: `Bearer ${t.tenantToken(f.id, 'user\u0000x')}` })],
    [
      'a JWT whose sub is 129 characters',
      (t, f) => ({ Authorization: `Bearer ${t.tenantToken(f.id, 'u'.repeat(129))}` }),
    ],
    ['a JWT whose sub holds spaces', (t, f) => ({ Authorization: `Bearer ${t.tenantToken(f.id, 'a b')}` })],
    [
      'a JWT whose role is not a user role',
      (t, f) => ({
        Authorization: `Bearer ${rawToken(t, { tenant_id: f.id, sub: 'u', role: 'superuser', iat: now(), exp: now() + 60 })}`,
      }),
    ],
  ];

  it.each(unauthorized)('answers 401 with the error body for %s', async (_name, headers) => {
    const res = await t
      .http()
      .get('/tenant')
      .set(await headers(t, tenant))
      .expect(401);
    expectErrorBody(res.body, 'UNAUTHORIZED');
  });

  it('answers 403 to an admin JWT on a tenant path', async () => {
    const res = await t.http().get('/tenant').set('Authorization', `Bearer ${t.adminToken()}`).expect(403);
    expectErrorBody(res.body, 'FORBIDDEN');
  });

  it('accepts a JWT at the configured lifetime with the managed claims sid and role', async () => {
    const token = rawToken(t, { tenant_id: tenant.id, sub: 'u-1', sid: 's-1', role: 'member', exp: now() + 8 * 3600 });
    await t.http().get('/tenant').set('Authorization', `Bearer ${token}`).expect(200);
  });

  it('rejects an expired API key', async () => {
    const fresh = await createTenant(t);
    await t.ds.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [fresh.keyId]);
    const res = await t.http().get('/tenant').set('X-API-Key', fresh.apiKey).expect(401);
    expectErrorBody(res.body, 'UNAUTHORIZED');
  });

  it('rejects a revoked key on its very next use', async () => {
    const fresh = await createTenant(t);
    await t.http().get('/tenant').set('X-API-Key', fresh.apiKey).expect(200);
    await t.http().delete(`/admin/keys/${fresh.keyId}`).set('Authorization', `Bearer ${t.adminToken()}`).expect(204);
    const res = await t.http().get('/tenant').set('X-API-Key', fresh.apiKey).expect(401);
    expectErrorBody(res.body, 'UNAUTHORIZED');
  });

  it('lets the API key decide when both headers are present', async () => {
    const badBearer = 'Bearer not.a.jwt';
    await t.http().get('/tenant').set('X-API-Key', tenant.apiKey).set('Authorization', badBearer).expect(200);
    const other = await createTenant(t);
    const res = await t
      .http()
      .get('/tenant')
      .set('X-API-Key', tenant.apiKey)
      .set('Authorization', `Bearer ${t.tenantToken(other.id)}`)
      .expect(200);
    expect(res.body.tenant.id).toBe(tenant.id);
    await t
      .http()
      .get('/tenant')
      .set('X-API-Key', 'sdf_k' + 'Z'.repeat(43))
      .set('Authorization', `Bearer ${t.tenantToken(tenant.id)}`)
      .expect(401);
  });

  describe('admin paths', () => {
    it('do not answer tenant credentials under any other spelling of the path', async () => {
      const other = await createTenant(t);
      const paths = [
        `/ADMIN/tenants/${other.id}`,
        `/Admin/tenants/${other.id}/keys`,
        `/Admin/tenants/${other.id}/webhooks`,
        `/Admin/queues/webhook-delivery/failed`,
        `/admin/tenants/${other.id}/`,
      ];
      for (const path of paths) {
        for (const headers of [
          { 'X-API-Key': tenant.apiKey },
          { Authorization: `Bearer ${t.tenantToken(tenant.id)}` },
        ]) {
          const res = await t.http().get(path).set(headers);
          expect(res.status, path).toBe(404);
          expect(JSON.stringify(res.body)).not.toContain(other.slug);
        }
      }
    });

    it('accept an admin JWT', async () => {
      const res = await t
        .http()
        .get(`/admin/tenants/${tenant.id}`)
        .set('Authorization', `Bearer ${t.adminToken()}`)
        .expect(200);
      expect(res.body.slug).toBe(tenant.slug);
    });

    it('answer 403 to a tenant JWT and to an API key', async () => {
      const byJwt = await t
        .http()
        .get(`/admin/tenants/${tenant.id}`)
        .set('Authorization', `Bearer ${t.tenantToken(tenant.id)}`)
        .expect(403);
      expectErrorBody(byJwt.body, 'FORBIDDEN');
      const byKey = await t.http().get(`/admin/tenants/${tenant.id}`).set('X-API-Key', tenant.apiKey).expect(403);
      expectErrorBody(byKey.body, 'FORBIDDEN');
    });

    it('answer 401 to no token, a forged token and an expired admin token', async () => {
      await t.http().get(`/admin/tenants/${tenant.id}`).expect(401);
      const forged = jwt.sign({ role: 'admin' }, 'y'.repeat(40), { subject: 'mallory', expiresIn: 60 });
      await t.http().get(`/admin/tenants/${tenant.id}`).set('Authorization', `Bearer ${forged}`).expect(401);
      const expired = jwt.sign({ role: 'admin' }, t.config.secrets.adminJwtSecret, { subject: 'op', expiresIn: -5 });
      await t.http().get(`/admin/tenants/${tenant.id}`).set('Authorization', `Bearer ${expired}`).expect(401);
    });

    it('do not accept a tenant-shaped token signed with the admin secret as admin', async () => {
      const token = jwt.sign({ tenant_id: tenant.id }, t.config.secrets.adminJwtSecret, {
        subject: 'x',
        expiresIn: 60,
      });
      await t.http().get(`/admin/tenants/${tenant.id}`).set('Authorization', `Bearer ${token}`).expect(401);
    });
  });

  it('never stores a raw API key in any table', async () => {
    const fresh = await createTenant(t);
    const tables: { table_name: string }[] = await t.ds.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    expect(tables.map((r) => r.table_name)).toEqual(expect.arrayContaining(['api_keys', 'audit_log', 'tenants']));
    for (const { table_name } of tables) {
      const rows: unknown[] = await t.ds.query(`SELECT * FROM "${table_name}"`);
      const dump = JSON.stringify(rows);
      expect(dump, table_name).not.toContain(fresh.apiKey);
      expect(dump, table_name).not.toContain(fresh.apiKey.slice(8));
    }
    const [row] = await t.ds.query(`SELECT key_prefix, key_hash, key_salt FROM api_keys WHERE id = $1`, [fresh.keyId]);
    expect(row.key_prefix).toBe(fresh.apiKey.slice(0, 8));
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('failed authentication is throttled per client address', () => {
  let t: TestApp;
  let tenant: TenantFixture;

  beforeAll(async () => {
    // Behind a trusted proxy (loopback here) X-Forwarded-For names the client, so two clients can be told apart.
    t = await startApp({ env: { AUTH_FAILURE_LIMIT: '5', TRUST_PROXY: 'loopback' } });
    tenant = await createTenant(t);
  });
  afterAll(() => t.close());

  it('answers 429 with Retry-After past the limit, before looking at the credential, for that address alone', async () => {
    const attacker = { 'X-Forwarded-For': '203.0.113.5' };
    for (let i = 0; i < 5; i++) {
      await t
        .http()
        .get('/tenant')
        .set(attacker)
        .set('X-API-Key', 'sdf_k' + 'Q'.repeat(43))
        .expect(401);
    }
    const wrong = await t
      .http()
      .get('/tenant')
      .set(attacker)
      .set('X-API-Key', 'sdf_k' + 'Q'.repeat(43))
      .expect(429);
    expectErrorBody(wrong.body, 'RATE_LIMITED');
    expect(Number(wrong.headers['retry-after'])).toBeGreaterThan(0);
    // Even a valid key from that address waits: the throttle answers before any verification.
    await t.http().get('/tenant').set(attacker).set('X-API-Key', tenant.apiKey).expect(429);
    await t.http().get('/tenant').set(attacker).set('Authorization', `Bearer ${t.adminToken()}`).expect(429);
    // Another client is unaffected.
    await t.http().get('/tenant').set('X-Forwarded-For', '203.0.113.6').set('X-API-Key', tenant.apiKey).expect(200);
  });

  it('does not count successful or forbidden requests as failures', async () => {
    const client = { 'X-Forwarded-For': '203.0.113.7' };
    for (let i = 0; i < 8; i++) {
      await t.http().get('/tenant').set(client).set('X-API-Key', tenant.apiKey).expect(200);
      await t.http().get(`/admin/tenants/${tenant.id}`).set(client).set('X-API-Key', tenant.apiKey).expect(403);
    }
  });

  it("loads the tenant for a request without the IdP's metadata, by API key and by JWT", async () => {
    const xml = `<md:EntityDescriptor>${'x'.repeat(50_000)}</md:EntityDescriptor>`;
    await t.ds.query(`UPDATE tenants SET saml_metadata_xml = $2, saml_idp_certificates = '["MIIB"]' WHERE id = $1`, [
      tenant.id,
      xml,
    ]);
    const byKey = await t.app.get(ApiKeysService).verify(tenant.apiKey);
    const byId = await t.app.get(TenantsRepository).findForAuth(tenant.id);
    for (const loaded of [byKey!.tenant, byId!]) {
      expect(loaded.id).toBe(tenant.id);
      expect(loaded.rate_limit_rpm).toEqual(expect.any(Number));
      const row = loaded as unknown as Record<string, unknown>;
      expect(row.saml_metadata_xml).toBeUndefined();
      expect(row.saml_idp_certificates).toBeUndefined();
    }
    // The full row still holds them, for SAML sign-in.
    expect((await t.app.get(TenantsRepository).findById(tenant.id))!.saml_metadata_xml).toBe(xml);
    await t
      .http()
      .get('/tenant')
      .set('Authorization', `Bearer ${rawToken(t, { tenant_id: tenant.id, sub: 'u1', exp: now() + 60 })}`)
      .expect(200);
  });
});
