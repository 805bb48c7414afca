import type { Provider } from '@nestjs/common';
import type { WorkerOptions } from 'bullmq';
import type { AppConfig } from '../config/app-config.js';

// @nestjs/bullmq's metadata keys for @Processor() and its worker options; stable across its releases.
const PROCESSOR_METADATA = 'bullmq:processor_metadata';
const WORKER_METADATA = 'bullmq:worker_metadata';

/**
 * S16: processors exist only in processes whose role runs workers (`worker` or `all`). Feature
 * modules with a `jobs/` folder expose `static register(config)` and list their processors through this.
 * Every processor's worker gets the configured lock and stalled-check timings: a job whose worker died
 * is taken over by a running worker at most WORKER_LOCK_DURATION_MS + WORKER_STALLED_INTERVAL_MS after
 * its death, on every queue (by a worker started later: within its start-up + WORKER_STALLED_INTERVAL_MS,
 * if longer; docs/operations.md).
 */
export function workerProviders(config: AppConfig, providers: Provider[]): Provider[] {
  if (!config.runsWorkers) return [];
  for (const provider of providers) {
    if (typeof provider !== 'function' || !Reflect.getMetadata(PROCESSOR_METADATA, provider)) continue;
    const options = (Reflect.getMetadata(WORKER_METADATA, provider) as Partial<WorkerOptions> | undefined) ?? {};
    Reflect.defineMetadata(
      WORKER_METADATA,
      {
        ...options,
        lockDuration: config.env.WORKER_LOCK_DURATION_MS,
        stalledInterval: config.env.WORKER_STALLED_INTERVAL_MS,
      },
      provider,
    );
  }
  return providers;
}
