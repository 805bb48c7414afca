import { Global, Module } from '@nestjs/common';
import { HealthController } from './health.controller.js';
import { ReadinessChecks } from '../common/readiness.js';

@Global()
@Module({ controllers: [HealthController], providers: [ReadinessChecks], exports: [ReadinessChecks] })
export class HealthModule {}
