import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminModule } from './admin/admin.module.js';
import { AuditModule } from './audit/audit.module.js';
import { AuthGuard } from './auth/auth.guard.js';
import { AuthModule } from './auth/auth.module.js';
import { AllExceptionsFilter } from './common/exception-filter.js';
import { createValidationPipe } from './common/validation.js';
import { ConfigModule } from './config/config.module.js';
import { AppConfig } from './config/app-config.js';
import { dataSourceOptions } from './database/data-source.js';
import { DocumentsModule } from './documents/documents.module.js';
import { EventsModule } from './events/events.module.js';
import { HealthModule } from './health/health.module.js';
import { DeadLettersModule } from './queue/dead-letters.module.js';
import { QueueModule } from './queue/queue.module.js';
import { RateLimitGuard } from './rate-limit/rate-limit.guard.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { RedisModule } from './redis/redis.module.js';
import { SchemasModule } from './schemas/schemas.module.js';
import { SigningKeysModule } from './signing/signing-keys.module.js';
import { SigningModule } from './signing/signing.module.js';
import { StorageModule } from './storage/storage.module.js';
import { TenantsModule } from './tenants/tenants.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

/** Imports the feature modules and registers the global guard chain, filter and pipe; nothing else. */
@Module({})
export class AppModule {
  static register(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.register(config),
        TypeOrmModule.forRoot(dataSourceOptions(config.env.DATABASE_URL, config.env.DATABASE_POOL_SIZE)),
        RedisModule,
        QueueModule,
        AuditModule,
        EventsModule,
        TenantsModule,
        AuthModule,
        RateLimitModule,
        HealthModule,
        AdminModule,
        StorageModule,
        DocumentsModule.register(config),
        DeadLettersModule,
        WebhooksModule.register(config),
        SchemasModule,
        SigningKeysModule,
        SigningModule.register(config),
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
