import { randomUUID } from 'node:crypto';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IS_ADMIN, IS_PUBLIC, IS_USER, ALLOW_UNVERIFIED } from '../src/auth/decorators.js';
import { login, register, type Account } from './helpers/accounts.js';
import { DASHBOARD_PATH } from '../src/queue/dashboard.js';
import { startApp, type TestApp } from './helpers/app.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

type Kind = 'admin' | 'tenant' | 'user' | 'public';
interface Route {
  method: string;
  path: string;
}
interface NestRoute extends Route {
  kind: Kind;
  allowUnverified: boolean;
}

const MIDDLEWARE_CATCH_ALL = '{/*splat}';

/** Every route the HTTP router serves, as registered (not a hand-kept list). */
function routerRoutes(t: TestApp): Route[] {
  const router = (t.app.getHttpAdapter().getInstance() as { router: { stack: RouterLayer[] } }).router;
  const routes: Route[] = [];
  for (const layer of router.stack) {
    if (!layer.route) continue;
    // Nest module middleware applied to every route (the request-bound pino logger of nestjs-pino) is
    // registered as this catch-all for every method; it passes each request on and answers none.
    if (layer.route.path === MIDDLEWARE_CATCH_ALL) continue;
    for (const method of Object.keys(layer.route.methods)) routes.push({ method, path: layer.route.path });
  }
  return routes;
}
interface RouterLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

function joinPath(...parts: string[]): string {
  const joined = parts
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/');
  return '/' + joined;
}

/** What each controller method declares: its route, and whether it is marked admin or public. */
function nestRoutes(t: TestApp): NestRoute[] {
  const discovery = new DiscoveryService(t.app.get(ModulesContainer));
  const scanner = new MetadataScanner();
  const reflector = new Reflector();
  const routes: NestRoute[] = [];
  for (const wrapper of discovery.getControllers()) {
    const type = wrapper.metatype as (new (...args: never[]) => object) | null;
    if (!type) continue;
    const base = Reflect.getMetadata(PATH_METADATA, type) as string | string[] | undefined;
    for (const name of scanner.getAllMethodNames(type.prototype)) {
      const handler = (type.prototype as Record<string, (...args: unknown[]) => unknown>)[name];
      const path = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (path === undefined || method === undefined) continue;
      const admin = reflector.getAllAndOverride<boolean>(IS_ADMIN, [handler, type]) === true;
      const isPublic = reflector.getAllAndOverride<boolean>(IS_PUBLIC, [handler, type]) === true;
      const user = reflector.getAllAndOverride<boolean>(IS_USER, [handler, type]) === true;
      const allowUnverified = reflector.getAllAndOverride<boolean>(ALLOW_UNVERIFIED, [handler, type]) === true;
      const kind: Kind = admin ? 'admin' : isPublic ? 'public' : user ? 'user' : 'tenant';
      for (const b of [base ?? ''].flat()) {
        for (const p of [path].flat()) {
          routes.push({ method: RequestMethod[method].toLowerCase(), path: joinPath(b, p), kind, allowUnverified });
        }
      }
    }
  }
  return routes;
}

const SPELLINGS: [string, (path: string) => string][] = [
  ['upper case', (p) => p.toUpperCase()],
  ['capitalised first segment', (p) => p.replace(/^\/(.)/, (_m, c: string) => '/' + c.toUpperCase())],
  ['trailing slash', (p) => p + '/'],
  ['doubled slash', (p) => '/' + p],
];

describe.each(['self-hosted', 'managed'])('route walk (%s): each route takes only its own credentials', (mode) => {
  let t: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let routes: NestRoute[];
  let owner: Account | undefined;

  beforeAll(async () => {
    t = await startApp({
      env: { DEPLOYMENT_MODE: mode, AUTH_FAILURE_LIMIT: '100000', AUTH_ROUTE_LIMIT_PER_ADDRESS: '100000' },
    });
    a = await createTenant(t, { rate_limit_rpm: 100_000 });
    b = await createTenant(t, { rate_limit_rpm: 100_000 });
    if (mode === 'managed') {
      // Managed tenants start on Free (20 requests a minute); Enterprise takes rate_limit_rpm (S12, M3).
      for (const tenant of [a, b]) {
        await t
          .http()
          .patch(`/admin/tenants/${tenant.id}`)
          .set('Authorization', `Bearer ${t.adminToken()}`)
          .send({ plan: 'enterprise' })
          .expect(200);
      }
    }
    routes = nestRoutes(t);
    // Managed /v1 account routes take a signed-in user's access token (of a verified address: until it is
    // verified, a user's tokens only read; walked below).
    if (mode === 'managed') {
      owner = await register(t);
      await t.ds.query(`UPDATE users SET email_verified = true WHERE id = $1`, [owner.userId]);
    }
  });
  afterAll(() => t.close());

  /** A concrete path for a route: tenant ids name the other tenant, every other parameter a fresh UUID. */
  function concrete(path: string): string {
    return path.replace(/:([A-Za-z]+)/g, (_m, name: string) =>
      name === 'tenantId' ? b.id : name === 'tenantSlug' ? b.slug : randomUUID(),
    );
  }

  function send(method: string, path: string, headers: Record<string, string>) {
    const req = (t.http() as unknown as Record<string, (p: string) => import('supertest').Test>)[method](path);
    for (const [k, v] of Object.entries(headers)) req.set(k, v);
    return req;
  }

  const tenantCredentials = (): [string, Record<string, string>][] => [
    ['API key', { 'X-API-Key': a.apiKey }],
    ['tenant JWT', { Authorization: `Bearer ${t.tenantToken(a.id)}` }],
  ];

  it('knows every route the router serves, and marks every /admin route admin', () => {
    const known = new Set(routes.map((r) => `${r.method} ${r.path}`));
    const served = routerRoutes(t);
    const outside = served.filter((r) => !known.has(`${r.method} ${r.path}`));
    // Only the OpenAPI document and its UI are routes outside the controllers (the queue dashboard is a
    // mount, not a route: its own test below).
    for (const r of outside) expect(r.path, `${r.method} ${r.path}`).toMatch(/^\/(docs|openapi\.json)/);
    for (const r of routes) expect(served).toContainEqual({ method: r.method, path: r.path });
    for (const r of routes) {
      if (r.path === '/admin' || r.path.startsWith('/admin/')) expect(r.kind, `${r.method} ${r.path}`).toBe('admin');
    }
    expect(routes.filter((r) => r.kind === 'admin').length).toBeGreaterThan(5);
    expect(routes.filter((r) => r.kind === 'tenant').length).toBeGreaterThan(10);
  });

  it('serves the documentation routes without credentials', async () => {
    const known = new Set(routes.map((r) => `${r.method} ${r.path}`));
    for (const r of routerRoutes(t).filter((x) => !known.has(`${x.method} ${x.path}`))) {
      const res = await send(r.method, r.path, {});
      expect([401, 403], `${r.method} ${r.path}`).not.toContain(res.status);
      expect(res.status, `${r.method} ${r.path}`).toBeLessThan(500);
    }
  });

  it('the queue dashboard, a documented express mount outside the controllers, is 401 to every credential but its own cookie', async () => {
    for (const headers of [
      {},
      ...tenantCredentials().map(([, h]) => h),
      { Authorization: `Bearer ${t.adminToken()}` },
    ]) {
      for (const path of [`${DASHBOARD_PATH}/`, `${DASHBOARD_PATH}/api/queues`]) {
        expect((await send('get', path, headers)).status, path).toBe(401);
      }
    }
  });

  it('admin routes: 401 without credentials, 403 for tenant credentials, served for an admin token', async () => {
    for (const r of routes.filter((x) => x.kind === 'admin')) {
      const path = concrete(r.path);
      const label = `${r.method} ${path}`;
      expect((await send(r.method, path, {})).status, label).toBe(401);
      for (const [name, headers] of tenantCredentials()) {
        const res = await send(r.method, path, headers);
        expect(res.status, `${label} with ${name}`).toBe(403);
        expect(res.body.error.code).toBe('FORBIDDEN');
      }
      const admin = await send(r.method, path, { Authorization: `Bearer ${t.adminToken()}` });
      expect([401, 403], label).not.toContain(admin.status);
      expect(admin.status, label).toBeLessThan(500);
    }
  });

  it('tenant routes: 401 without credentials, 403 for an admin token, served for tenant credentials', async () => {
    for (const r of routes.filter((x) => x.kind === 'tenant')) {
      const path = concrete(r.path);
      const label = `${r.method} ${path}`;
      expect((await send(r.method, path, {})).status, label).toBe(401);
      const admin = await send(r.method, path, { Authorization: `Bearer ${t.adminToken()}` });
      expect(admin.status, `${label} with an admin token`).toBe(403);
      for (const [name, headers] of tenantCredentials()) {
        const res = await send(r.method, path, headers);
        expect([401, 403, 429], `${label} with ${name}`).not.toContain(res.status);
        // Stripe checkout and portal without Stripe settings (M3): documented, not a failure.
        if (res.status === 503 && res.body.error?.code === 'BILLING_NOT_CONFIGURED') continue;
        expect(res.status, `${label} with ${name}`).toBeLessThan(500);
      }
    }
  });

  it('user routes: 401 without credentials, 403 for an admin token, an API key or a service JWT, served for a user', async () => {
    const userRoutes = routes.filter((x) => x.kind === 'user');
    expect(userRoutes.length > 0).toBe(mode === 'managed');
    for (const r of userRoutes) {
      const path = concrete(r.path);
      const label = `${r.method} ${path}`;
      expect((await send(r.method, path, {})).status, label).toBe(401);
      expect((await send(r.method, path, { Authorization: `Bearer ${t.adminToken()}` })).status, label).toBe(403);
      for (const [name, headers] of tenantCredentials()) {
        expect((await send(r.method, path, headers)).status, `${label} with ${name}`).toBe(403);
      }
      // A fresh session each time: logout ends the one it is called with.
      const tokens = await login(t, owner!.email);
      const res = await send(r.method, path, { Authorization: `Bearer ${tokens.access_token}` });
      expect([401, 403], `${label} as a user`).not.toContain(res.status);
      expect(res.status, `${label} as a user`).toBeLessThan(500);
    }
  });

  it('a user whose address is not verified reads, and every write but their own sign-in security is 403 EMAIL_NOT_VERIFIED', async () => {
    if (mode !== 'managed') return;
    const unverified = await register(t);
    const signedIn = async () => `Bearer ${(await login(t, unverified.email)).access_token}`;
    let refused = 0;
    for (const r of routes.filter((x) => x.kind === 'tenant' || x.kind === 'user')) {
      const path = concrete(r.path);
      const label = `${r.method} ${path}`;
      const res = await send(r.method, path, { Authorization: await signedIn() });
      if (r.method === 'get' || r.allowUnverified) {
        expect(res.body?.error?.code, label).not.toBe('EMAIL_NOT_VERIFIED');
        continue;
      }
      expect(res.status, label).toBe(403);
      expect(res.body.error.code, label).toBe('EMAIL_NOT_VERIFIED');
      expect(res.body.error.message, label).toMatch(/verify-email\/resend/);
      refused++;
    }
    // Uploads, signing, deletes, webhooks, connectors, keys, team and billing writes among them.
    expect(refused).toBeGreaterThan(20);
    // Once verified, the next sign-in writes.
    await t.ds.query(`UPDATE users SET email_verified = true WHERE id = $1`, [unverified.userId]);
    const res = await send('post', '/webhooks', { Authorization: await signedIn() }).send({
      url: 'https://example.com/hook',
      secret: 'a webhook secret of enough length',
      events: ['document.uploaded'],
    });
    expect(res.body?.error?.code).not.toBe('EMAIL_NOT_VERIFIED');
  });

  it('public routes answer without credentials', async () => {
    for (const r of routes.filter((x) => x.kind === 'public')) {
      const res = await send(r.method, concrete(r.path), {});
      expect([401, 403], `${r.method} ${r.path}`).not.toContain(res.status);
    }
  });

  it.each(SPELLINGS)('no route answers under another spelling (%s), whatever the credentials', async (_name, spell) => {
    for (const r of routes) {
      const path = spell(concrete(r.path));
      if (path === concrete(r.path)) continue;
      for (const headers of [
        ...tenantCredentials().map(([, h]) => h),
        { Authorization: `Bearer ${t.adminToken()}` },
        {},
      ]) {
        const res = await send(r.method, path, headers);
        expect(res.status, `${r.method} ${path}`).toBe(404);
      }
    }
  });
});
