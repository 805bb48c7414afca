import { Module } from '@nestjs/common';
import { RateLimitService } from './rate-limit.service.js';
import { TenantLimitResolver } from './tenant-limit.resolver.js';

@Module({ providers: [RateLimitService, TenantLimitResolver], exports: [RateLimitService, TenantLimitResolver] })
export class RateLimitModule {}
