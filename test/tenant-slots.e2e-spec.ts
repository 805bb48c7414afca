import { randomBytes } from 'node:crypto';
import { Queue, QueueEvents, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppConfig } from '../src/config/app-config.js';
import { TenantSlots } from '../src/queue/tenant-slots.js';
import { RedisService, redisOptions } from '../src/redis/redis.module.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * TenantSlots on a real BullMQ queue: a job over its tenant's share is sent back to the delayed set, and
 * a freed slot wakes it. The send-back delay here is far longer than the test may run, so every job
 * past the first can only finish by being woken.
 */
describe('tenant slots (fairness between tenants on a shared queue)', () => {
  const prefix = `sdft_${randomBytes(5).toString('hex')}`;
  const name = 'slots-test';
  let redis: RedisService;
  let slots: TenantSlots;
  let queue: Queue;
  let events: QueueEvents;
  let worker: Worker;
  let running = 0;
  let mostAtOnce = 0;
  let attempts = 0;
  const finished: string[] = [];

  beforeAll(async () => {
    redis = new RedisService({ env: { REDIS_URL, REDIS_PREFIX: prefix } } as unknown as AppConfig);
    slots = new TenantSlots(redis);
    const connection = redisOptions(REDIS_URL) as ConnectionOptions;
    queue = new Queue(name, { connection, prefix });
    events = new QueueEvents(name, { connection, prefix });
    await events.waitUntilReady();
    worker = new Worker(
      name,
      async (job: Job<{ tenant: string }>, token?: string) => {
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
      },
      { connection, prefix, concurrency: 4 },
    );
  });
  afterAll(async () => {
    await worker?.close();
    await events?.close();
    await queue?.obliterate({ force: true }).catch(() => undefined);
    await queue?.close();
    const keys = await redis.client.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.client.del(...keys);
    await redis.client.quit();
  });

  it('runs one tenant within its share, and a freed slot wakes the job sent back instead of leaving it to its delay', async () => {
    const jobs = await queue.addBulk(
      Array.from({ length: 5 }, (_, i) => ({ name: 'j', data: { tenant: 'tenant-a' }, opts: { jobId: `a${i}` } })),
    );
    await Promise.all(jobs.map((job) => job.waitUntilFinished(events, 30_000)));
    expect(finished.sort()).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
    // The share held: one at a time, though the worker takes four jobs at once.
    expect(mostAtOnce).toBe(1);
    // Jobs were sent back (more attempts than jobs), and each came back long before its two-minute delay.
    expect(attempts).toBeGreaterThan(5);
    expect(await slots.held(name, 'tenant-a')).toBe(0);
  }, 60_000);
});
