import { randomUUID } from 'node:crypto';
import { fc } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openArchive } from '../src/sdf/index.js';
import { fuzzRuns, mutationsOf } from '../src/sdf/testing/mutations.js';
import { login, register } from './helpers/accounts.js';
import { startApp, type TestApp } from './helpers/app.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

/**
 * Fuzzing the HTTP surface (fast-check): damaged archives through POST /validate and POST /upload, and
 * random JSON bodies, headers and query strings on every route of both deployments, /v1 included. No
 * answer may be a 5xx: whatever a client sends is answered in the error shape. FUZZ_RUNS sets the cases
 * (requests) per target: 1,000 in the suite (each run draws new ones: a fresh seed every time), 20,000 in
 * `npm run fuzz`, which is where long runs belong. Cases go out in batches of BATCH at once, as clients
 * do, so a target takes seconds, not minutes; a failing batch shrinks like any other case, down to the
 * request that fails.
 */
const runs = fuzzRuns(1_000);
const BATCH = 10;
const batches = Math.ceil(runs / BATCH);

interface Route {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
}

/** Every route the router serves (not a hand-kept list), but the web front end's files and the queue dashboard. */
function routesOf(t: TestApp): Route[] {
  const router = (t.app.getHttpAdapter().getInstance() as { router: { stack: Layer[] } }).router;
  const routes: Route[] = [];
  for (const layer of router.stack) {
    const path = layer.route?.path;
    if (!path || path.startsWith('{/*') || path.startsWith('/app') || path.startsWith('/docs')) continue;
    for (const method of Object.keys(layer.route!.methods))
      if (['get', 'post', 'put', 'patch', 'delete'].includes(method))
        routes.push({ method: method as Route['method'], path });
  }
  return routes;
}
interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
}

const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 40,
});
const segment = fc.oneof(
  fc.uuid().map(String),
  printable.filter((s) => s.length > 0).map(encodeURIComponent),
  fc.constantFrom('invoice', 'v1', '..', '%00', '%2F', 'null', '0', '-1'),
);
const queryKeys = fc.constantFrom(
  'limit',
  'cursor',
  'status',
  'version',
  'document_type',
  'from',
  'to',
  'q',
  'action',
  'page',
);
const query = fc.dictionary(queryKeys, fc.oneof(printable, fc.integer().map(String)), { maxKeys: 4 });
const headerNames = fc.constantFrom(
  'Idempotency-Key',
  'X-Request-Id',
  'Accept',
  'Content-Type',
  'If-None-Match',
  'Range',
  'X-Forwarded-For',
  'Origin',
);
const headers = fc.dictionary(headerNames, printable, { maxKeys: 3 });
const body = fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.object({ maxDepth: 3 }), fc.constant(undefined));

function fill(path: string, values: string[]): string {
  let i = 0;
  return path.replace(/:[A-Za-z_]+|\*[A-Za-z_]+|\{\/\*[A-Za-z_]+\}/g, () => values[i++ % values.length] ?? 'x');
}

interface RequestCase {
  route: Route;
  values: string[];
  q: Record<string, string>;
  h: Record<string, string>;
  b: unknown;
  who: number;
}

async function walk(t: TestApp, auths: Record<string, string>[]) {
  const routes = routesOf(t);
  expect(routes.length).toBeGreaterThan(40);
  const request: fc.Arbitrary<RequestCase> = fc.record({
    route: fc.constantFrom(...routes),
    values: fc.array(segment, { minLength: 1, maxLength: 3 }),
    q: query,
    h: headers,
    b: body,
    who: fc.nat({ max: auths.length - 1 }),
  });
  const send = async ({ route, values, q, h, b, who }: RequestCase) => {
    const path = fill(route.path, values);
    let req = t.http()[route.method](path).query(q).set(h).set(auths[who]!);
    // Sent as text: the body's bytes go out as they are, under the content type the case chose.
    if (b !== undefined && route.method !== 'get')
      req = req.set('Content-Type', h['Content-Type'] ?? 'application/json').send(JSON.stringify(b));
    const res = await req;
    // 503 BILLING_NOT_CONFIGURED is the deliberate answer of the billing routes on a deployment without Stripe.
    const deliberate = res.status === 503 && res.body?.error?.code === 'BILLING_NOT_CONFIGURED';
    if (res.status >= 500 && !deliberate)
      throw new Error(`${route.method.toUpperCase()} ${path} -> ${res.status} ${res.text.slice(0, 300)}`);
  };
  await fuzzInBatches(request, send);
}

/** `runs` cases of `arbitrary`, BATCH at once; counts them, so the suite shows it ran as many as it says. */
async function fuzzInBatches<T>(arbitrary: fc.Arbitrary<T>, check: (value: T) => Promise<void>): Promise<void> {
  let checked = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(arbitrary, { minLength: BATCH, maxLength: BATCH }), async (cases) => {
      await Promise.all(cases.map(check));
      checked += cases.length;
    }),
    { numRuns: batches },
  );
  expect(checked).toBeGreaterThanOrEqual(runs);
}

describe('random requests on every route of the self-hosted deployment', () => {
  let t: TestApp;
  let tenant: TenantFixture;

  beforeAll(async () => {
    // Cases go out ten at a time: uploads in flight are not what this target looks at.
    t = await startApp({ env: { AUTH_FAILURE_LIMIT: '1000000', UPLOADS_IN_FLIGHT_PER_TENANT: '64' } });
    tenant = await createTenant(t, { rate_limit_rpm: 1_000_000 });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers every one below 500', async () => {
    await walk(t, [
      { 'X-API-Key': tenant.apiKey },
      { Authorization: `Bearer ${t.tenantToken(tenant.id)}` },
      { Authorization: `Bearer ${t.adminToken()}` },
      {},
    ]);
  }, 300_000);

  it.each(['/validate', '/upload'])(
    'answers damaged archives on %s below 500, and never calls a changed one valid',
    async (path) => {
      const { archive } = await buildSdf({ sign: 'ECDSA-P256' });
      const entries = (await openArchive(archive)).files;
      await fuzzInBatches(mutationsOf(archive, entries), async ({ bytes }) => {
        const res = await t.http().post(path).set('X-API-Key', tenant.apiKey).attach('file', bytes, 'f.sdf');
        if (res.status >= 500) throw new Error(`POST ${path} -> ${res.status} ${res.text.slice(0, 300)}`);
        if (path === '/validate' && res.body.valid === true && res.body.is_signed === true) {
          const files = (await openArchive(bytes)).files;
          expect(files.size).toBe(entries.size);
          for (const [name, data] of entries) expect(files.get(name)?.equals(data)).toBe(true);
        }
      });
    },
    600_000,
  );
});

describe('random requests on every route of the managed deployment, /v1 included', () => {
  let smtp: SmtpSink;
  let t: TestApp;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await startApp({
      env: {
        DEPLOYMENT_MODE: 'managed',
        SMTP_URL: smtp.url,
        AUTH_FAILURE_LIMIT: '1000000',
        // Random requests must meet the handlers, not the per-address throttles of the sign-in routes.
        LOGIN_FAILURE_LIMIT_PER_ADDRESS: '1000000',
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('answers every one below 500', async () => {
    const account = await register(t);
    const tokens = await login(t, account.email);
    const tenant = await createTenant(t, { rate_limit_rpm: 1_000_000 });
    await walk(t, [
      { Authorization: `Bearer ${tokens.access_token}` },
      { 'X-API-Key': tenant.apiKey },
      { Authorization: `Bearer ${t.adminToken()}` },
      { 'X-SDF-Session': randomUUID() },
      {},
    ]);
  }, 300_000);
});
