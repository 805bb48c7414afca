import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { Periodic } from '../../common/periodic.js';
import { AppConfig } from '../../config/app-config.js';
import { QueueName } from '../../queue/queues.js';
import { DocumentsRepository } from '../documents.repository.js';
import { enqueueValidation } from './validate-sdf.job.js';
import { TenantSlots } from '../../queue/tenant-slots.js';

const BATCH = 500;

/**
 * S9: a document never stays pending because an enqueue was lost (the process died between commit
 * and enqueue, Redis was down). Every PENDING_SWEEP_INTERVAL_MS, documents pending for longer than
 * PENDING_SWEEP_AGE_MS are enqueued again; the job id is the document id, so a document whose job
 * still exists (waiting, active, or dead-lettered for inspection) is not enqueued twice. Several
 * workers sweeping at once is harmless for the same reason.
 */
@Injectable()
export class PendingSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('PendingSweeper');
  private readonly periodic = new Periodic(
    () => this.sweep(),
    (err) => this.logger.warn({ msg: 'sweep failed', err: String(err) }),
  );

  constructor(
    @Inject(AppConfig) private readonly config: AppConfig,
    @InjectQueue(QueueName.ValidateSdf) private readonly queue: Queue,
    private readonly documents: DocumentsRepository,
    private readonly slots: TenantSlots,
  ) {}

  onApplicationBootstrap(): void {
    this.periodic.start(this.config.env.PENDING_SWEEP_INTERVAL_MS);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.periodic.stop();
  }

  /** One pass; returns how many documents were handed to the queue. */
  async sweep(): Promise<number> {
    const stale = await this.documents.findStalePendingAcrossTenants(this.config.env.PENDING_SWEEP_AGE_MS, BATCH);
    for (const doc of stale) await enqueueValidation(this.queue, this.slots, doc);
    if (stale.length) this.logger.log({ msg: 'pending documents re-enqueued', count: stale.length });
    return stale.length;
  }
}
