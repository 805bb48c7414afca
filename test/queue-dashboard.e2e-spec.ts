import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_PATH } from '../src/queue/dashboard.js';
import { cliEnvOf, startApp, type TestApp } from './helpers/app.js';
import { distCli, requireBuild, runNode } from './helpers/processes.js';
import { createTenant } from './helpers/tenants.js';

/** The operators' queue dashboard: a one-time link from the CLI, then a cookie for that path alone. */
describe('queue dashboard', () => {
  let t: TestApp;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    requireBuild(distCli);
    t = await startApp();
    env = cliEnvOf(t);
  });
  afterAll(() => t.close());

  async function link(): Promise<string> {
    const run = await runNode(
      [distCli, 'admin', 'dashboard-link', '--subject', 'carol', '--base-url', 'https://sdf.example.com/'],
      env,
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const url = new URL(run.stdout.trim());
    expect(url.origin).toBe('https://sdf.example.com');
    expect(url.pathname).toBe(`${DASHBOARD_PATH}/login`);
    return url.pathname + url.search;
  }

  it('is 401 without the cookie, whatever other credential is sent', async () => {
    const tenant = await createTenant(t);
    for (const headers of [{}, { Authorization: `Bearer ${t.adminToken()}` }, { 'X-API-Key': tenant.apiKey }]) {
      for (const path of [`${DASHBOARD_PATH}/`, `${DASHBOARD_PATH}/api/queues`]) {
        const res = await t.http().get(path).set(headers);
        expect(res.status, path).toBe(401);
        expect(res.body.error.code).toBe('UNAUTHORIZED');
      }
    }
    await t.http().get(`${DASHBOARD_PATH}/`).set('Cookie', 'sdf_dashboard=forged.value.here').expect(401);
    await t.http().get(`${DASHBOARD_PATH}/login?ticket=${t.adminToken()}`).expect(401);
  });

  it('a link works once: it sets a short-lived HttpOnly cookie scoped to the dashboard, and a second use is 401', async () => {
    const path = await link();
    const first = await t.http().get(path).expect(303);
    expect(first.headers.location).toBe(`${DASHBOARD_PATH}/`);
    const setCookie = ([] as string[]).concat(first.headers['set-cookie'] ?? []);
    expect(setCookie).toHaveLength(1);
    const attributes = setCookie[0].split(';').map((a) => a.trim());
    expect(attributes[0]).toMatch(/^sdf_dashboard=[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(attributes).toContain('HttpOnly');
    expect(attributes).toContain(`Path=${DASHBOARD_PATH}`);
    expect(attributes).toContain('SameSite=Strict');
    expect(attributes).toContain('Max-Age=900');
    const cookie = attributes[0];

    const page = await t.http().get(`${DASHBOARD_PATH}/`).set('Cookie', cookie).expect(200);
    expect(page.text).toContain('__UI_CONFIG__');
    const queues = await t.http().get(`${DASHBOARD_PATH}/api/queues`).set('Cookie', cookie).expect(200);
    expect(JSON.stringify(queues.body)).toContain('validate-sdf');
    // The dashboard is an express app of its own; it names no server software either.
    const script = /src="([^"]+\.js)"/.exec(page.text)?.[1];
    expect(script).toBeDefined();
    const asset = await t
      .http()
      .get(new URL(script!, `http://x${DASHBOARD_PATH}/`).pathname)
      .set('Cookie', cookie);
    expect(asset.status).toBe(200);
    for (const res of [page, queues, asset]) expect(res.headers['x-powered-by']).toBeUndefined();

    const again = await t.http().get(path);
    expect(again.status).toBe(401);
    expect(again.headers['set-cookie']).toBeUndefined();

    // The cookie is no admin credential, and the admin API beside the dashboard keeps its own rules.
    await t.http().get('/admin/queues/validate-sdf/failed').set('Cookie', cookie).expect(401);
    await t
      .http()
      .get('/admin/queues/validate-sdf/failed')
      .set('Authorization', `Bearer ${t.adminToken()}`)
      .expect(200);

    const audit: { actor: string }[] = await t.ds.query(
      `SELECT actor FROM audit_log WHERE action = 'admin.dashboard_login'`,
    );
    expect(audit).toEqual([{ actor: 'admin:carol' }]);
  });
});
