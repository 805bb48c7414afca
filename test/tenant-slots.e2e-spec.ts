import { randomBytes } from 'node:crypto';
import { Queue, QueueEvents, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppConfig } from '../src/config/app-config.js';
import { TenantSlots } from '../src/queue/tenant-slots.js';
import { RedisService, redisOptions } from '../src/redis/redis.module.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

type Processor = (slots: TenantSlots, job: Job<{ tenant: string }>, token?: string) => Promise<unknown>;

interface SlotsQueue {
  slots: TenantSlots;
  queue: Queue;
  events: QueueEvents;
  worker: Worker;
  close(): Promise<void>;
}

/** A BullMQ queue of its own (own Redis prefix) with a worker of four running `process` on its jobs. */
async function slotsQueue(name: string, process: Processor, autorun = true): Promise<SlotsQueue> {
  const prefix = `sdft_${randomBytes(5).toString('hex')}`;
  const redis = new RedisService({ env: { REDIS_URL, REDIS_PREFIX: prefix } } as unknown as AppConfig);
  const slots = new TenantSlots(redis);
  const connection = redisOptions(REDIS_URL) as ConnectionOptions;
  const queue = new Queue(name, { connection, prefix });
  const events = new QueueEvents(name, { connection, prefix });
  await events.waitUntilReady();
  const worker = new Worker(name, (job: Job<{ tenant: string }>, token?: string) => process(slots, job, token), {
    connection,
    prefix,
    concurrency: 4,
    autorun,
  });
  const close = async () => {
    await worker.close();
    await events.close();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    const keys = await redis.client.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.client.del(...keys);
    await redis.client.quit();
  };
  return { slots, queue, events, worker, close };
}

/**
 * TenantSlots on a real BullMQ queue: a job over its tenant's share is sent back to the delayed set, and
 * a freed slot wakes it. The send-back delay here is far longer than the test may run, so every job
 * past the first can only finish by being woken.
 */
describe('tenant slots (fairness between tenants on a shared queue)', () => {
  const name = 'slots-test';
  let q: SlotsQueue;
  let running = 0;
  let mostAtOnce = 0;
  let attempts = 0;
  const finished: string[] = [];

  beforeAll(async () => {
    q = await slotsQueue(name, async (slots, job, token) => {
      attempts++;
      const policy = { perTenant: 1, leaseMs: 120_000 };
      return slots.run(name, job.data.tenant, job, token, policy, async () => {
        running++;
        mostAtOnce = Math.max(mostAtOnce, running);
        // Holds the slot long enough for the other jobs of the tenant to be taken up and sent back.
        await new Promise((resolve) => setTimeout(resolve, 100));
        running--;
        finished.push(job.id!);
      });
    });
  });
  afterAll(() => q?.close());

  it('runs one tenant within its share, and a freed slot wakes the job sent back instead of leaving it to its delay', async () => {
    const jobs = await q.queue.addBulk(
      Array.from({ length: 5 }, (_, i) => ({ name: 'j', data: { tenant: 'tenant-a' }, opts: { jobId: `a${i}` } })),
    );
    await Promise.all(jobs.map((job) => job.waitUntilFinished(q.events, 30_000)));
    expect(finished.sort()).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
    // The share held: one at a time, though the worker takes four jobs at once.
    expect(mostAtOnce).toBe(1);
    // Jobs were sent back (more attempts than jobs), and each came back long before its two-minute delay.
    expect(attempts).toBeGreaterThan(5);
    expect(await q.slots.held(name, 'tenant-a')).toBe(0);
  }, 60_000);
});

/**
 * A queue whose producers mark jobs waiting (`tracksWaiting`): a tenant alone runs past its share, and
 * keeps to its share only while another tenant has jobs waiting.
 */
describe('tenant slots with waiting jobs tracked', () => {
  const name = 'slots-tracked';
  const policy = { perTenant: 1, leaseMs: 120_000, tracksWaiting: true };
  let q: SlotsQueue;
  const running = new Map<string, number>();
  const starts: { tenant: string; id: string; runningOfTenant: number; otherStarted: boolean }[] = [];
  let attempts = 0;

  beforeAll(async () => {
    q = await slotsQueue(
      name,
      async (slots, job, token) => {
        attempts++;
        const tenant = job.data.tenant;
        return slots.run(name, tenant, job, token, policy, async () => {
          running.set(tenant, (running.get(tenant) ?? 0) + 1);
          starts.push({
            tenant,
            id: job.id!,
            runningOfTenant: running.get(tenant)!,
            otherStarted: starts.some((s) => s.tenant !== tenant),
          });
          await new Promise((resolve) => setTimeout(resolve, 150));
          running.set(tenant, running.get(tenant)! - 1);
        });
      },
      false,
    );
  });
  afterAll(() => q?.close());

  /** Marks each job waiting, then enqueues them all, as enqueueValidation does. */
  async function enqueue(tenant: string, ids: string[]): Promise<Job[]> {
    for (const id of ids) await q.slots.waiting(name, tenant, id);
    return q.queue.addBulk(ids.map((id) => ({ name: 'j', data: { tenant }, opts: { jobId: id } })));
  }

  it('a tenant alone uses every worker, without sending a job back', async () => {
    const jobs = await enqueue('tenant-b', ['b0', 'b1', 'b2', 'b3']);
    void q.worker.run();
    await Promise.all(jobs.map((job) => job.waitUntilFinished(q.events, 30_000)));
    expect(Math.max(...starts.map((s) => s.runningOfTenant))).toBe(4);
    expect(attempts).toBe(4);
  }, 60_000);

  it('while another tenant has a job waiting, a tenant keeps to its share', async () => {
    await q.worker.pause();
    starts.length = 0;
    const jobs = [...(await enqueue('tenant-c', ['c0', 'c1', 'c2', 'c3'])), ...(await enqueue('tenant-d', ['d0']))];
    void q.worker.resume();
    await Promise.all(jobs.map((job) => job.waitUntilFinished(q.events, 30_000)));
    const beforeD = starts.filter((s) => s.tenant === 'tenant-c' && !s.otherStarted);
    expect(beforeD.length).toBeGreaterThan(0);
    // Until d0 started, tenant-c ran one job at a time though four workers were free.
    for (const s of beforeD) expect(s.runningOfTenant).toBe(1);
    expect(starts.map((s) => s.id).sort()).toEqual(['c0', 'c1', 'c2', 'c3', 'd0']);
  }, 60_000);
});
