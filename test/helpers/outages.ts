import pg from 'pg';
import { expect } from 'vitest';
import type { ServiceCluster, ServiceProcess } from './service-processes.js';
import { waitUntil } from './wait.js';

/** One answer seen by a client during an outage test. */
export interface Outcome {
  what: string;
  status: number;
  body: { id?: string; error?: { code?: string; message?: string } };
  retryAfter?: string;
  requestId?: string;
  /** From the start of the request (or the end of its body, where a test holds the body back) to the answer. */
  ms: number;
  at: number;
}

/** A generous bound: an answer within it came from the service, not from a wait for a dependency to return. */
export const FEW_SECONDS = 5_000;

/** Cluster settings of the Redis outage tests: documents whose job went with Redis's data get a fresh one soon. */
export const QUICK_PENDING_SWEEP = { PENDING_SWEEP_INTERVAL_MS: '2000', PENDING_SWEEP_AGE_MS: '3000' };

export async function timed(
  what: string,
  run: () => PromiseLike<{ status: number; body: unknown; headers: Record<string, string> }>,
): Promise<Outcome> {
  const started = Date.now();
  const res = await run();
  return {
    what,
    status: res.status,
    body: res.body as Outcome['body'],
    retryAfter: res.headers['retry-after'],
    requestId: res.headers['x-request-id'],
    ms: Date.now() - started,
    at: started,
  };
}

/** Every answer is a success or 503 SERVICE_UNAVAILABLE in the error shape with Retry-After, within seconds. */
export function expectSuccessOr503(outcomes: Outcome[]): void {
  expect(outcomes.filter((o) => o.ms >= FEW_SECONDS)).toEqual([]);
  for (const o of outcomes) {
    expect([200, 201, 503]).toContain(o.status);
    if (o.status === 503) {
      expect(o.body.error?.code).toBe('SERVICE_UNAVAILABLE');
      expect(typeof o.body.error?.message).toBe('string');
      expect(Number(o.retryAfter)).toBeGreaterThan(0);
    }
  }
}

/** Each answer, a refused one too, has its access-log line with its status. */
export async function expectAccessLogged(api: ServiceProcess, outcomes: Outcome[]): Promise<void> {
  const logged = () =>
    new Map(api.logs.filter((l) => l.msg === 'request').map((l) => [l.request_id as string, l.status as number]));
  await waitUntil(
    () => outcomes.every((o) => logged().has(o.requestId!)),
    'an access-log line per answer',
    5_000,
  ).catch(() => undefined);
  expect(outcomes.filter((o) => logged().get(o.requestId!) !== o.status)).toEqual([]);
}

/** With no operator action nothing stays pending, the documents are exactly those accepted, and all are valid. */
export async function expectAcceptedSettledValid(cluster: ServiceCluster, accepted: Iterable<string>): Promise<void> {
  const db = new pg.Client({ connectionString: cluster.postgres.url });
  await db.connect();
  try {
    await waitUntil(
      async () =>
        (await db.query<{ n: string }>(`SELECT count(*) AS n FROM documents WHERE status = 'pending'`)).rows[0]!.n ===
        '0',
      'no document pending',
      60_000,
    );
    const { rows } = await db.query<{ id: string; status: string }>(`SELECT id, status FROM documents`);
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(accepted));
    expect(rows.filter((r) => r.status !== 'valid')).toEqual([]);
  } finally {
    await db.end();
  }
}

/** The log is JSON only and says the Redis outage once and its end once in each process. */
export function expectRedisOutageLoggedOnce(processes: ServiceProcess[]): void {
  for (const p of processes) {
    expect(p.otherLines).toEqual([]);
    expect(p.logs.filter((l) => String(l.msg).startsWith('Redis is unreachable'))).toHaveLength(1);
    expect(p.logs.filter((l) => l.msg === 'Redis answers again')).toHaveLength(1);
  }
}
