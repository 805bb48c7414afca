import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { AppConfig } from '../config/app-config.js';
import { ALL_QUEUES } from './queues.js';

// @nestjs/bullmq's metadata key for @Processor(); stable across its releases.
const PROCESSOR_METADATA = 'bullmq:processor_metadata';

/** STYLE: a worker process whose queues lack a processor refuses to start rather than leave jobs waiting. */
@Injectable()
export class ProcessorCheck implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    @Inject(AppConfig) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.runsWorkers) return;
    const served = new Set<string>();
    for (const wrapper of this.discovery.getProviders()) {
      const target = wrapper.metatype as object | undefined;
      if (!target || !wrapper.isDependencyTreeStatic()) continue;
      const meta = Reflect.getMetadata(PROCESSOR_METADATA, target) as { name?: string } | undefined;
      if (meta?.name) served.add(meta.name);
    }
    const missing = ALL_QUEUES.filter((q) => !served.has(q));
    if (missing.length) throw new Error(`No processor registered for queue(s): ${missing.join(', ')}`);
  }
}
