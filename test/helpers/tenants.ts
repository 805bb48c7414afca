import type { TestApp } from './app.js';

export interface TenantFixture {
  id: string;
  slug: string;
  apiKey: string;
  keyId: string;
  keyPrefix: string;
}

let counter = 0;

/** A tenant with one API key, made through the admin API as an operator would. */
export async function createTenant(
  t: TestApp,
  input: { slug?: string; rate_limit_rpm?: number } = {},
): Promise<TenantFixture> {
  const slug = input.slug ?? `tenant-${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;
  const admin = `Bearer ${t.adminToken()}`;
  const tenant = await t
    .http()
    .post('/admin/tenants')
    .set('Authorization', admin)
    .send({ name: `Tenant ${slug}`, slug, ...(input.rate_limit_rpm ? { rate_limit_rpm: input.rate_limit_rpm } : {}) })
    .expect(201);
  const key = await t
    .http()
    .post(`/admin/tenants/${tenant.body.id}/keys`)
    .set('Authorization', admin)
    .send({ name: 'test key' })
    .expect(201);
  return { id: tenant.body.id, slug, apiKey: key.body.key, keyId: key.body.id, keyPrefix: key.body.key_prefix };
}
