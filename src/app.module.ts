import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from './accounts/accounts.module.js';
import type { ServerResponse } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import type { Logger as Pino } from 'pino';
import { AdminModule } from './admin/admin.module.js';
import { DeadLettersModule } from './admin/dead-letters.module.js';
import { AuditModule } from './audit/audit.module.js';
import { AuthGuard } from './auth/auth.guard.js';
import { AuthModule } from './auth/auth.module.js';
import { ConnectorsModule } from './connectors/connectors.module.js';
import { BillingModule } from './billing/billing.module.js';
import { ClockModule, type Clock } from './common/clock.js';
import { AllExceptionsFilter } from './common/exception-filter.js';
import { createPino } from './common/logger.js';
import { createValidationPipe } from './common/validation.js';
import { ConfigModule } from './config/config.module.js';
import { AppConfig } from './config/app-config.js';
import { dataSourceOptions } from './database/data-source.js';
import { EmailModule } from './email/email.module.js';
import { DocumentsModule } from './documents/documents.module.js';
import { EventStreamModule } from './events/event-stream.module.js';
import { EventsModule } from './events/events.module.js';
import { HealthModule } from './health/health.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { QueueModule } from './queue/queue.module.js';
import { RateLimitGuard } from './rate-limit/rate-limit.guard.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { UnmeteredUsageModule } from './rate-limit/unmetered-usage.js';
import { RedisModule } from './redis/redis.module.js';
import { SamlModule } from './saml/saml.module.js';
import { SchemasModule } from './schemas/schemas.module.js';
import { SigningKeysModule } from './signing/signing-keys.module.js';
import { SigningModule } from './signing/signing.module.js';
import { StorageModule } from './storage/storage.module.js';
import { TenantsModule } from './tenants/tenants.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

/** What a test may put in place of the real thing (never a store: PostgreSQL and Redis stay real). */
export interface AppOverrides {
  clock?: Clock;
}

/** Imports the feature modules and registers the global guard chain, filter and pipe; nothing else. */
@Module({})
export class AppModule {
  /** `logger`: the process's pino instance, so that request-bound loggers write where the rest does. */
  static register(
    config: AppConfig,
    overrides: AppOverrides = {},
    logger: Pino = createPino(config.env.LOG_LEVEL),
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.register(config),
        ClockModule.register(overrides.clock),
        LoggerModule.forRoot({
          pinoHttp: {
            logger,
            // The one line per request is written by the request scope (bootstrap.ts) with tenant and
            // request id; pino-http adds a line, headers redacted, only for a server error. A 503 is an
            // outage and a 507 a full disk, said once by the exception filter, not once more per request.
            customLogLevel: (_req, res, err) =>
              res.statusCode === 503 || res.statusCode === 507
                ? 'silent'
                : err || res.statusCode >= 500
                  ? 'error'
                  : 'silent',
            genReqId: (_req, res: ServerResponse) => String(res.getHeader('X-Request-Id') ?? ''),
          },
        }),
        // Each module registers its own entities (TypeOrmModule.forFeature), so database/ names no feature.
        TypeOrmModule.forRoot({
          ...dataSourceOptions(config.env.DATABASE_URL, config.env.DATABASE_POOL_SIZE, config.env.DATABASE_APP_ROLE),
          autoLoadEntities: true,
        }),
        RedisModule,
        QueueModule,
        AuditModule,
        EventsModule,
        EventStreamModule.register(config),
        TenantsModule,
        AuthModule,
        RateLimitModule,
        HealthModule,
        MetricsModule,
        AdminModule,
        StorageModule,
        DocumentsModule.register(config),
        DeadLettersModule,
        WebhooksModule.register(config),
        SchemasModule,
        SigningKeysModule,
        SigningModule.register(config),
        EmailModule.register(config),
        SamlModule,
        ConnectorsModule.register(config),
        // S16: the managed deployment's own modules; self-hosted, /v1 does not exist. They provide the core's
        // ports (usage metering, audit readers); self-hosted, the core's own stand in: nothing is metered.
        ...(config.isManaged ? [AccountsModule, BillingModule] : [UnmeteredUsageModule]),
      ],
      providers: [
        // Order matters: authentication first, then the per-tenant rate limit (S12 "after authentication").
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_GUARD, useClass: RateLimitGuard },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        { provide: APP_PIPE, useFactory: createValidationPipe },
      ],
    };
  }
}
