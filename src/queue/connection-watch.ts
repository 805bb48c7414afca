import { getQueueToken, WorkerHost } from '@nestjs/bullmq';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, ModuleRef } from '@nestjs/core';
import type { Queue } from 'bullmq';
import { RedisService } from '../redis/redis.module.js';
import { ALL_QUEUES } from './queues.js';

/**
 * Every queue and worker of the process reports its connection errors to the one Redis outage log (one
 * line an outage, not one per connection and reconnection attempt), and a worker that takes over a
 * stalled job (its worker died or stopped renewing the lock) says so.
 */
@Injectable()
export class QueueConnectionWatch implements OnApplicationBootstrap {
  private readonly logger = new Logger('Queue');

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly discovery: DiscoveryService,
    private readonly redis: RedisService,
  ) {}

  onApplicationBootstrap(): void {
    for (const name of ALL_QUEUES) {
      const queue = this.moduleRef.get<Queue>(getQueueToken(name), { strict: false });
      this.redis.outages.watch(queue);
    }
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!(instance instanceof WorkerHost)) continue;
      let worker: WorkerHost['worker'];
      try {
        worker = instance.worker;
      } catch {
        continue;
      }
      this.redis.outages.watch(worker);
      worker.on('stalled', (jobId) => {
        this.logger.warn({
          msg: 'a stalled job was taken over: the worker that held it stopped renewing its lock',
          queue: worker.name,
          job_id: jobId,
        });
      });
    }
  }
}
