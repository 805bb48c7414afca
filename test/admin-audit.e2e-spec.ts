import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { TestIdp } from './helpers/saml-idp.js';

interface AuditRow {
  tenant_id: string;
  action: string;
  resource_id: string;
  actor: string;
  metadata: Record<string, unknown>;
}

describe('admin API and audit log (S6, S11)', () => {
  let t: TestApp;
  const admin = () => `Bearer ${t.adminToken()}`;
  const auditRows = (tenantId: string): Promise<AuditRow[]> =>
    t.ds.query(
      `SELECT tenant_id, action, resource_id, actor, metadata FROM audit_log WHERE tenant_id = $1 ORDER BY created_at, id`,
      [tenantId],
    );

  beforeAll(async () => {
    // As the owner: the append-only triggers are what even the owner meets.
    t = await startApp({ env: { DATABASE_APP_ROLE: '' } });
  });
  afterAll(() => t.close());

  it('audits each admin action exactly once with the operator as actor', async () => {
    const created = await t
      .http()
      .post('/admin/tenants')
      .set('Authorization', admin())
      .send({ name: 'Acme', slug: 'acme-audit' })
      .expect(201);
    const tenantId = created.body.id as string;
    expect(created.body).toMatchObject({ name: 'Acme', slug: 'acme-audit', rate_limit_rpm: 60, saml_enabled: false });

    await t
      .http()
      .patch(`/admin/tenants/${tenantId}`)
      .set('Authorization', admin())
      .send({ rate_limit_rpm: 120 })
      .expect(200);
    const key = await t
      .http()
      .post(`/admin/tenants/${tenantId}/keys`)
      .set('Authorization', admin())
      .send({ name: 'erp' })
      .expect(201);
    await t.http().delete(`/admin/keys/${key.body.id}`).set('Authorization', admin()).expect(204);
    // Reads change nothing and leave no entry; a second revoke is a no-op.
    await t.http().get(`/admin/tenants/${tenantId}`).set('Authorization', admin()).expect(200);
    await t.http().get(`/admin/tenants/${tenantId}/keys`).set('Authorization', admin()).expect(200);
    await t.http().delete(`/admin/keys/${key.body.id}`).set('Authorization', admin()).expect(204);

    const rows = await auditRows(tenantId);
    const own = rows.filter((r) =>
      ['tenant.create', 'tenant.update', 'api_key.create', 'api_key.revoke'].includes(r.action),
    );
    expect(own.map((r) => [r.action, r.resource_id, r.actor])).toEqual([
      ['tenant.create', tenantId, 'admin:test-operator'],
      ['tenant.update', tenantId, 'admin:test-operator'],
      ['api_key.create', key.body.id, 'admin:test-operator'],
      ['api_key.revoke', key.body.id, 'admin:test-operator'],
    ]);
    expect(own[1].metadata).toEqual({ changed: ['rate_limit_rpm'] });
    expect(JSON.stringify(rows)).not.toContain(key.body.key);
  });

  it('rejects UPDATE, DELETE and TRUNCATE on audit_log at the database', async () => {
    const created = await t
      .http()
      .post('/admin/tenants')
      .set('Authorization', admin())
      .send({ name: 'B', slug: 'append-only' })
      .expect(201);
    const before = await auditRows(created.body.id);
    expect(before.length).toBeGreaterThan(0);
    await expect(t.ds.query(`UPDATE audit_log SET action = 'tampered'`)).rejects.toThrow(/append-only/);
    await expect(t.ds.query(`DELETE FROM audit_log`)).rejects.toThrow(/append-only/);
    await expect(t.ds.query(`TRUNCATE audit_log`)).rejects.toThrow(/append-only/);
    expect(await auditRows(created.body.id)).toEqual(before);
  });

  it('rolls the audit row back with a change that fails', async () => {
    await t
      .http()
      .post('/admin/tenants')
      .set('Authorization', admin())
      .send({ name: 'C', slug: 'dup-slug' })
      .expect(201);
    const [{ count: before }] = await t.ds.query(`SELECT count(*)::int AS count FROM audit_log`);
    const dup = await t
      .http()
      .post('/admin/tenants')
      .set('Authorization', admin())
      .send({ name: 'C2', slug: 'dup-slug' })
      .expect(409);
    expect(dup.body.error.code).toBe('CONFLICT');
    const [{ count: after }] = await t.ds.query(`SELECT count(*)::int AS count FROM audit_log`);
    expect(after).toBe(before);
  });

  it('validates tenant and key input', async () => {
    const cases: [object, string][] = [
      [{ name: 'x', slug: 'Not Safe' }, '/slug'],
      [{ name: 'x', slug: '-lead' }, '/slug'],
      [{ name: '', slug: 'ok-slug' }, '/name'],
      [{ name: 'x', slug: 'ok-slug', rate_limit_rpm: 0 }, '/rate_limit_rpm'],
      [{ name: 'x', slug: 'ok-slug', extra: true }, '/extra'],
    ];
    for (const [body, path] of cases) {
      const res = await t.http().post('/admin/tenants').set('Authorization', admin()).send(body).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    const tenant = await t
      .http()
      .post('/admin/tenants')
      .set('Authorization', admin())
      .send({ name: 'K', slug: 'keys-input' })
      .expect(201);
    await t
      .http()
      .post(`/admin/tenants/${tenant.body.id}/keys`)
      .set('Authorization', admin())
      .send({ name: 'k', expires_at: '2001-01-01T00:00:00Z' })
      .expect(400);
    await t
      .http()
      .post(`/admin/tenants/${tenant.body.id}/keys`)
      .set('Authorization', admin())
      .send({ name: 'k', expires_at: 'tomorrow' })
      .expect(400);
    await t
      .http()
      .patch(`/admin/tenants/${tenant.body.id}`)
      .set('Authorization', admin())
      .send({ saml_enabled: true })
      .expect(400);
    await t.http().get('/admin/tenants/not-a-uuid').set('Authorization', admin()).expect(400);
    await t.http().get('/admin/tenants/00000000-0000-4000-8000-000000000000').set('Authorization', admin()).expect(404);
    await t.http().delete('/admin/keys/00000000-0000-4000-8000-000000000000').set('Authorization', admin()).expect(404);
  });

  it('returns the raw key once and lists keys without hashes', async () => {
    const tenant = await t
      .http()
      .post('/admin/tenants')
      .set('Authorization', admin())
      .send({ name: 'L', slug: 'list-keys' })
      .expect(201);
    const created = await t
      .http()
      .post(`/admin/tenants/${tenant.body.id}/keys`)
      .set('Authorization', admin())
      .send({ name: 'ci', expires_at: '2099-01-01T00:00:00Z' })
      .expect(201);
    expect(created.body.key).toMatch(/^sdf_k[A-Za-z0-9_-]{43}$/);
    expect(created.body.key_prefix).toBe(created.body.key.slice(0, 8));
    expect(created.body.expires_at).toBe('2099-01-01T00:00:00.000Z');
    const list = await t.http().get(`/admin/tenants/${tenant.body.id}/keys`).set('Authorization', admin()).expect(200);
    expect(list.body.keys).toEqual([
      {
        id: created.body.id,
        key_prefix: created.body.key_prefix,
        name: 'ci',
        expires_at: '2099-01-01T00:00:00.000Z',
        revoked_at: null,
        status: 'active',
        created_at: expect.any(String),
      },
    ]);
    expect(JSON.stringify(list.body)).not.toMatch(/hash|salt/);
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);
  });

  it('updates SAML settings together (the metadata URL must serve IdP metadata)', async () => {
    const idp = await TestIdp.start();
    try {
      const tenant = await t
        .http()
        .post('/admin/tenants')
        .set('Authorization', admin())
        .send({ name: 'S', slug: 'saml-set' })
        .expect(201);
      const res = await t
        .http()
        .patch(`/admin/tenants/${tenant.body.id}`)
        .set('Authorization', admin())
        .send({
          saml_enabled: true,
          saml_metadata_url: idp.metadataUrl,
          saml_entity_id: 'urn:sdf:saml-set',
        })
        .expect(200);
      expect(res.body).toMatchObject({
        saml_enabled: true,
        saml_metadata_url: idp.metadataUrl,
        saml_entity_id: 'urn:sdf:saml-set',
        saml_idp_sso_url: idp.ssoUrl,
      });
    } finally {
      await idp.close();
    }
  });
});
