/**
 * The cost of usage metering (M3): throughput of an authenticated `GET /tenant` on the managed
 * deployment (metering on: the rate window and the period's API-call count and quota in one Redis
 * script) beside the self-hosted deployment (metering off: the rate window alone), in one run.
 *
 * Two `api` processes of the built service (dist/src/main.js) run side by side on one database and
 * Redis: one managed (its tenant on Enterprise with a rate limit and API-call quota far above the
 * load, so every request is counted and checked but none refused), one self-hosted. They take turns in
 * rounds (BENCH_ROUNDS, default 12, of BENCH_SECONDS, default 2, a side, order alternating), each round
 * with BENCH_CLIENTS keep-alive clients (default 16); the figure to compare is the median of the
 * per-round ratios, so a slow spell of the shared machine falls on both sides.
 *
 *   npm run bench:metering
 *
 * Then the part that differs alone: the Redis work per request, the service's own two scripts (rate
 * window; rate window with the API-call count) run BENCH_SCRIPT_CALLS times each, pipelined, so the
 * figure is Redis's and the client's work without the round trip's waiting.
 *
 * Needs the local PostgreSQL and Redis; makes and drops its own database and Redis keys.
 */
import 'reflect-metadata';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { Redis } from 'ioredis';
import { signAdminToken } from '../src/auth/tokens.js';
import { METER_REQUEST_SCRIPT } from '../src/billing/usage-meter.service.js';
import { RATE_WINDOW_SCRIPT } from '../src/rate-limit/rate-limit.service.js';
import { benchSetup, median, run, startProcess, stopProcesses } from './harness.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);
const SCRIPT_CALLS = Number(process.env.BENCH_SCRIPT_CALLS ?? 20_000);

/** An `api` process of the built service (it logs its URL once it listens). */
async function startApi(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const { child, url } = await startProcess('api', env);
  return { child, url: url! };
}

async function call(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<unknown> {
  const res = await fetch(url, {
    method,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A tenant with an API key, allowed far more than the load (managed: Enterprise with its own limits). */
async function tenantOn(url: string, adminSecret: string, managed: boolean): Promise<string> {
  const admin = { Authorization: `Bearer ${signAdminToken(adminSecret, 'bench', 3600)}` };
  const slug = `metering-${managed ? 'on' : 'off'}-${randomBytes(3).toString('hex')}`;
  const tenant = (await call(`${url}/admin/tenants`, 'POST', admin, {
    name: slug,
    slug,
    rate_limit_rpm: 1_000_000,
  })) as { id: string };
  if (managed) {
    await call(`${url}/admin/tenants/${tenant.id}`, 'PATCH', admin, {
      plan: 'enterprise',
      limits: { rpm: 1_000_000, api_calls: 1_000_000_000, documents: 1_000_000, storage_bytes: 1_000_000_000 },
    });
  }
  const key = (await call(`${url}/admin/tenants/${tenant.id}/keys`, 'POST', admin, { name: 'bench' })) as {
    key: string;
  };
  return key.key;
}

/** Requests answered 200 in `seconds` by CLIENTS keep-alive clients; any other status stops the run. */
async function hammer(url: string, apiKey: string, seconds: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const target = new URL('/tenant', url);
  const until = performance.now() + seconds * 1000;
  let done = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        { host: target.hostname, port: target.port, path: target.pathname, agent, headers: { 'X-API-Key': apiKey } },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end();
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < until) {
        await one();
        done++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  return done / elapsed;
}

/** Microseconds per call of each script, pipelined, alternating five times; the median of each. */
async function scriptCost(redis: Redis, prefix: string): Promise<{ rate: number; metered: number }> {
  await redis.hset(`${prefix}:bill:b`, {
    rpm: '1000000000',
    docs: '-1',
    calls: '1000000000000',
    bytes: '-1',
    ps: '0',
    pe: '0',
  });
  const [rateSha, meterSha] = (await Promise.all([
    redis.script('LOAD', RATE_WINDOW_SCRIPT),
    redis.script('LOAD', METER_REQUEST_SCRIPT),
  ])) as [string, string];
  const burst = async (add: (p: ReturnType<Redis['pipeline']>) => void): Promise<number> => {
    const p = redis.pipeline();
    for (let i = 0; i < SCRIPT_CALLS; i++) add(p);
    const t0 = performance.now();
    await p.exec();
    return ((performance.now() - t0) / SCRIPT_CALLS) * 1000;
  };
  const now = Date.now();
  const month = [String(Date.UTC(2026, 0, 1)), String(Date.UTC(2026, 1, 1))];
  const rates: number[] = [];
  const metered: number[] = [];
  for (let i = 0; i < 5; i++) {
    rates.push(await burst((p) => p.evalsha(rateSha, 1, `${prefix}:rl:a`, '60000', '1000000000')));
    metered.push(
      await burst((p) =>
        p.evalsha(
          meterSha,
          4,
          `${prefix}:rl:b`,
          `${prefix}:bill:b`,
          `${prefix}:use:b`,
          `${prefix}:use:dirty`,
          '60000',
          String(now),
          month[0]!,
          month[1]!,
          'b',
          '1',
        ),
      ),
    );
  }
  return { rate: median(rates), metered: median(metered) };
}

const quartile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))]!;

async function main(): Promise<void> {
  const setup = await benchSetup();
  const { config } = setup;
  const prefix = config.env.REDIS_PREFIX;
  // The two API processes find the database migrated.
  const env: NodeJS.ProcessEnv = { ...setup.env, DATABASE_RUN_MIGRATIONS: 'false' };
  const children: ChildProcess[] = [];
  try {
    const on = await startApi({ ...env, DEPLOYMENT_MODE: 'managed' });
    const off = await startApi({ ...env, DEPLOYMENT_MODE: 'self-hosted' });
    children.push(on.child, off.child);
    const sides = {
      on: { url: on.url, key: await tenantOn(on.url, config.secrets.adminJwtSecret, true) },
      off: { url: off.url, key: await tenantOn(off.url, config.secrets.adminJwtSecret, false) },
    };
    // Warm-up: JIT, connection pools, the managed tenant's state seeded into Redis.
    await hammer(sides.on.url, sides.on.key, 1);
    await hammer(sides.off.url, sides.off.key, 1);

    console.log(`GET /tenant with an API key; ${CLIENTS} clients, ${ROUNDS} rounds of ${SECONDS} s a side`);
    console.log('round | metering on req/s | metering off req/s | on / off');
    const ratios: number[] = [];
    let sumOn = 0;
    let sumOff = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
      const rate: Record<'on' | 'off', number> = { on: 0, off: 0 };
      for (const side of order) rate[side] = await hammer(sides[side].url, sides[side].key, SECONDS);
      ratios.push(rate.on / rate.off);
      sumOn += rate.on;
      sumOff += rate.off;
      console.log(`${r + 1} | ${rate.on.toFixed(0)} | ${rate.off.toFixed(0)} | ${(rate.on / rate.off).toFixed(3)}`);
    }
    const m = median(ratios);
    console.log(
      `median on/off ${m.toFixed(3)} (quartiles ${quartile(ratios, 0.25).toFixed(3)}-${quartile(ratios, 0.75).toFixed(3)}); ` +
        `overall ${(sumOn / ROUNDS).toFixed(0)} vs ${(sumOff / ROUNDS).toFixed(0)} req/s = ${(sumOn / sumOff).toFixed(3)}`,
    );
    console.log(`cost of metering (median): ${((1 - m) * 100).toFixed(1)} % (goal: at most 5 %)`);

    const redis = new Redis(config.env.REDIS_URL);
    try {
      const cost = await scriptCost(redis, prefix);
      console.log(
        `Redis work per request (${SCRIPT_CALLS} pipelined calls, median of 5): rate window ${cost.rate.toFixed(1)} us, ` +
          `rate window + API-call count ${cost.metered.toFixed(1)} us (+${(cost.metered - cost.rate).toFixed(1)} us)`,
      );
    } finally {
      redis.disconnect();
    }
  } finally {
    await stopProcesses(children);
    const redis = new Redis(config.env.REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.unlink(...keys);
    redis.disconnect();
    await setup.cleanup();
  }
}

run(main);
