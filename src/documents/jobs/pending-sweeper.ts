import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { Periodic } from '../../common/periodic.js';
import { AppConfig } from '../../config/app-config.js';
import { BackgroundOutages } from '../../queue/outages.js';
import { QueueName } from '../../queue/queues.js';
import { DocumentsRepository } from '../documents.repository.js';
import { enqueueValidation } from './validate-sdf.job.js';
import { TenantSlots } from '../../queue/tenant-slots.js';

const BATCH = 500;

/**
 * S9: a document never stays pending because an enqueue was lost (the process died between commit
 * and enqueue, Redis was down) or its job gave up. Every PENDING_SWEEP_INTERVAL_MS, documents pending
 * for longer than PENDING_SWEEP_AGE_MS get a job again. The job id is the document id, so adding one
 * while the document's job exists (waiting, delayed, active) is a no-op, and several workers sweeping
 * at once are harmless; but a job kept in the failed set would make the add a no-op for as long as the
 * set keeps it, so a failed job that has rested PENDING_SWEEP_AGE_MS is removed first and replaced.
 */
@Injectable()
export class PendingSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('PendingSweeper');
  private readonly periodic = new Periodic(
    () => this.sweep(),
    (err) => {
      if (!this.outages.failed('pending sweep', err)) this.logger.warn({ msg: 'sweep failed', err: String(err) });
    },
  );

  constructor(
    @Inject(AppConfig) private readonly config: AppConfig,
    @InjectQueue(QueueName.ValidateSdf) private readonly queue: Queue,
    private readonly documents: DocumentsRepository,
    private readonly slots: TenantSlots,
    private readonly outages: BackgroundOutages,
  ) {}

  onApplicationBootstrap(): void {
    this.periodic.start(this.config.env.PENDING_SWEEP_INTERVAL_MS);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.periodic.stop();
  }

  /** One pass; returns how many documents were handed to the queue. */
  async sweep(): Promise<number> {
    const restMs = this.config.env.PENDING_SWEEP_AGE_MS;
    const stale = await this.documents.findStalePendingAcrossTenants(restMs, BATCH);
    let enqueued = 0;
    let replaced = 0;
    for (const doc of stale) {
      const job = await this.queue.getJob(doc.id);
      if (job) {
        // Still under way (waiting, delayed, active): it will settle the document.
        if (!(await job.isFailed())) continue;
        // Failed for good a moment ago: let it rest before the next try, so a file that stays broken
        // is tried once per PENDING_SWEEP_AGE_MS, not on every sweep.
        if (Date.now() - (job.finishedOn ?? 0) < restMs) continue;
        await job.remove();
        replaced++;
      }
      await enqueueValidation(this.queue, this.slots, doc);
      enqueued++;
    }
    if (enqueued)
      this.logger.log({ msg: 'pending documents enqueued again', count: enqueued, replaced_failed: replaced });
    return enqueued;
  }
}
