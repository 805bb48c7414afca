import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { getQueueToken, WorkerHost } from '@nestjs/bullmq';
import { ModuleRef } from '@nestjs/core';
import type { Job, Queue } from 'bullmq';
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ALL_QUEUES, QueueName } from '../queue/queues.js';

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/**
 * Prometheus metrics of one process. Labels are bounded sets only (route patterns, methods, statuses,
 * queue names, outcomes, SDF error codes): never a tenant id, a document id or a raw path, which would
 * both leak and grow without bound.
 */
@Injectable()
export class MetricsService implements OnApplicationBootstrap {
  readonly registry = new Registry();

  readonly httpDuration = new Histogram({
    name: 'sdf_http_request_duration_seconds',
    help: 'HTTP request duration by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly jobDuration = new Histogram({
    name: 'sdf_job_duration_seconds',
    help: 'Background job run time by queue and outcome (completed, failed)',
    labelNames: ['queue', 'outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly validationOutcomes = new Counter({
    name: 'sdf_validation_outcomes_total',
    help: 'Validation results by outcome (valid, invalid) and SDF error code (none when valid)',
    labelNames: ['outcome', 'code'] as const,
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'sdf_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome (delivered, skipped, retrying, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly storageOrphansRemoved = new Counter({
    name: 'sdf_storage_orphans_removed_total',
    help: 'Stored objects removed by the orphan sweep (no document record), by kind (sdf, data)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  constructor(
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
  ) {
    collectDefaultMetrics({ register: this.registry });
    const queues = (): Queue[] =>
      ALL_QUEUES.map((name) => this.moduleRef.get<Queue>(getQueueToken(name), { strict: false }));
    new Gauge({
      name: 'sdf_queue_jobs',
      help: 'Jobs per queue and state (waiting, active, delayed, failed), read from Redis at scrape time',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      async collect() {
        for (const queue of queues()) {
          const counts = await queue.getJobCounts(...QUEUE_STATES);
          for (const state of QUEUE_STATES) this.set({ queue: queue.name, state }, counts[state] ?? 0);
        }
      },
    });
  }

  /** Job metrics come from the workers of this process, whichever feature module defines them. */
  onApplicationBootstrap(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!(instance instanceof WorkerHost)) continue;
      let worker;
      try {
        worker = instance.worker;
      } catch {
        continue; // a processor whose worker is not started in this process role
      }
      worker.on('completed', (job: Job, result: unknown) => this.jobSettled(job, 'completed', result));
      worker.on('failed', (job: Job | undefined) => {
        if (job) this.jobSettled(job, 'failed', undefined);
      });
    }
  }

  private jobSettled(job: Job, outcome: 'completed' | 'failed', result: unknown): void {
    const queue = job.queueName;
    // A failed attempt that will be retried has no finishedOn; its run ended now.
    if (job.processedOn)
      this.jobDuration.observe({ queue, outcome }, ((job.finishedOn ?? Date.now()) - job.processedOn) / 1000);
    const r = (result ?? {}) as { status?: string; code?: string | null; delivered?: boolean; skipped?: string };
    if (queue === QueueName.ValidateSdf && outcome === 'completed' && r.status) {
      this.validationOutcomes.inc({ outcome: r.status, code: r.code ?? 'none' });
    }
    if (queue === QueueName.WebhookDelivery) {
      // BullMQ sets finishedOn on a failure only when the job has failed for good (no attempt left, or unrecoverable).
      const label =
        outcome === 'completed' ? (r.delivered ? 'delivered' : 'skipped') : job.finishedOn ? 'failed' : 'retrying';
      this.webhookDeliveries.inc({ outcome: label });
    }
  }

  /** Express middleware: one observation per response, labelled by the matched route's pattern. */
  httpMiddleware() {
    return (req: Request, res: Response, next: NextFunction) => {
      const end = this.httpDuration.startTimer();
      res.on('finish', () => {
        const pattern = (req.route as { path?: string } | undefined)?.path;
        const route = pattern ? `${req.baseUrl}${pattern}` : 'unmatched';
        end({ route, method: req.method, status: String(res.statusCode) });
      });
      next();
    };
  }
}
