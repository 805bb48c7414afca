import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { MetricsController } from './metrics.controller.js';
import { MetricsService } from './metrics.service.js';

/**
 * Prometheus metrics (prom-client): on the API behind METRICS_TOKEN, or on METRICS_PORT (that listener
 * is started by main.ts, so that the command line, which boots the same modules, never binds it).
 */
@Global()
@Module({
  imports: [DiscoveryModule],
  controllers: [MetricsController],
  providers: [MetricsService],
  exports: [MetricsService],
})
export class MetricsModule {}
