import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

const packageVersion = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

describe('health, errors and OpenAPI (S5, S15)', () => {
  let t: TestApp;
  let tenant: TenantFixture;

  beforeAll(async () => {
    t = await startApp();
    tenant = await createTenant(t);
  });
  afterAll(() => t.close());

  it('serves /health without credentials, with the package version', async () => {
    const res = await t.http().get('/health').expect(200);
    expect(res.body).toEqual({ status: 'ok', version: packageVersion, deployment_mode: 'self-hosted' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('reports readiness of database and Redis', async () => {
    const res = await t.http().get('/health/ready').expect(200);
    expect(res.body.status).toBe('ok');
    expect(res.body.checks).toMatchObject({ database: 'ok', redis: 'ok' });
  });

  it('answers unknown routes with 404 in the error shape', async () => {
    const res = await t.http().get('/no/such/route').set('X-API-Key', tenant.apiKey).expect(404);
    expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String), details: [] } });
  });

  it('answers malformed JSON with 400 and an oversized body with 413, never a stack trace', async () => {
    const admin = `Bearer ${t.adminToken()}`;
    const bad = await t
      .http()
      .post('/admin/tenants')
      .set('Authorization', admin)
      .set('Content-Type', 'application/json')
      .send('{"name": ')
      .expect(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(bad.body)).not.toMatch(/at \w+ \(|node_modules/);
    const huge = JSON.stringify({ name: 'x'.repeat(t.config.env.JSON_BODY_LIMIT_BYTES + 10), slug: 'huge' });
    const big = await t
      .http()
      .post('/admin/tenants')
      .set('Authorization', admin)
      .set('Content-Type', 'application/json')
      .send(huge)
      .expect(413);
    expect(big.body).toEqual({ error: { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String), details: [] } });
  });

  it('echoes a sane X-Request-Id and replaces an unsafe one', async () => {
    const ok = await t.http().get('/health').set('X-Request-Id', 'trace-123').expect(200);
    expect(ok.headers['x-request-id']).toBe('trace-123');
    const unsafe = await t.http().get('/health').set('X-Request-Id', 'bad id\twith spaces').expect(200);
    expect(unsafe.headers['x-request-id']).not.toContain(' ');
  });

  it('serves an OpenAPI 3.1 document that passes the 3.1 schema, with the three security schemes', async () => {
    const res = await t.http().get('/openapi.json').expect(200);
    expect(res.body.openapi).toMatch(/^3\.1\.\d+$/);
    const validator = new Validator();
    const result = await validator.validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(Object.keys(res.body.components.securitySchemes).sort()).toEqual(['admin-jwt', 'api-key', 'tenant-jwt']);
    expect(res.body.paths['/admin/tenants'].post.security).toEqual([{ 'admin-jwt': [] }]);
    expect(res.body.paths['/tenant'].get.security).toEqual(
      expect.arrayContaining([{ 'api-key': [] }, { 'tenant-jwt': [] }]),
    );
    expect(res.body.info.version).toBe(packageVersion);
  });

  it('renders Swagger UI at /docs', async () => {
    const res = await t.http().get('/docs').redirects(1).expect(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.text).toMatch(/swagger-ui/i);
    const init = await t.http().get('/docs/swagger-ui-init.js').expect(200);
    expect(init.text).toContain('SDF document service');
  });
});
