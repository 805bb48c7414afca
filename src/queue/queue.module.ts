import { BullModule } from '@nestjs/bullmq';
import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { ConnectionOptions } from 'bullmq';
import { AppConfig } from '../config/app-config.js';
import { redisOptions, requestPathRedisOptions } from '../redis/redis.module.js';
import { QueueConnectionWatch } from './connection-watch.js';
import { BackgroundOutages } from './outages.js';
import { ProcessorCheck } from './processor-check.js';
import { BullMQOtel } from 'bullmq-otel';
import { ALL_QUEUES, defaultJobOptions } from './queues.js';
import { TenantSlots } from './tenant-slots.js';

/**
 * Queue wiring in one place: the connection, the key prefix and the job defaults. Processors live in
 * their feature modules (`jobs/`) and are registered only when the process role runs workers.
 */
@Global()
@Module({
  imports: [
    DiscoveryModule,
    BullModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        // An API process only enqueues, from requests: its commands fail fast in an outage (503) instead
        // of waiting for Redis. Workers keep BullMQ's required waiting connections.
        connection: (config.runsWorkers
          ? redisOptions(config.env.REDIS_URL)
          : requestPathRedisOptions(config.env.REDIS_URL)) as ConnectionOptions,
        prefix: config.env.REDIS_PREFIX,
        defaultJobOptions: defaultJobOptions(config),
        // Trace context travels inside each job: a job's spans continue the trace that queued it.
        telemetry: config.env.OTEL_EXPORTER_OTLP_ENDPOINT ? new BullMQOtel({ tracerName: 'sdf-service' }) : undefined,
      }),
    }),
    BullModule.registerQueue(...ALL_QUEUES.map((name) => ({ name }))),
  ],
  providers: [ProcessorCheck, TenantSlots, QueueConnectionWatch, BackgroundOutages],
  exports: [BullModule, TenantSlots, BackgroundOutages],
})
export class QueueModule {}
