import { Module } from '@nestjs/common';
import { RateLimitService } from './rate-limit.service.js';
import { SessionRateLimit } from './session-rate-limit.service.js';
import { TenantLimitResolver } from './tenant-limit.resolver.js';

@Module({
  providers: [RateLimitService, TenantLimitResolver, SessionRateLimit],
  exports: [RateLimitService, TenantLimitResolver, SessionRateLimit],
})
export class RateLimitModule {}
