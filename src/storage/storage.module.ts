import { Global, Inject, Logger, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { ReadinessChecks } from '../health/readiness.js';
import { LocalStorageDriver } from './local.driver.js';
import { S3StorageDriver } from './s3.driver.js';
import { STORAGE_DRIVER, type StorageDriver } from './storage-driver.js';

/** S13: the configured driver; `local` by default, `s3` for any S3-compatible store. */
export function createStorageDriver(config: AppConfig): StorageDriver {
  const env = config.env;
  if (env.STORAGE_DRIVER === 'local') return new LocalStorageDriver(env.STORAGE_LOCAL_DIR);
  return new S3StorageDriver({
    endpoint: env.S3_ENDPOINT,
    region: env.S3_REGION,
    // env.ts requires these three when STORAGE_DRIVER=s3.
    bucket: env.S3_BUCKET!,
    accessKeyId: env.S3_ACCESS_KEY_ID!,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY!,
    forcePathStyle: env.S3_FORCE_PATH_STYLE,
  });
}

@Global()
@Module({
  providers: [{ provide: STORAGE_DRIVER, inject: [AppConfig], useFactory: createStorageDriver }],
  exports: [STORAGE_DRIVER],
})
export class StorageModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(STORAGE_DRIVER) private readonly storage: StorageDriver,
    private readonly readiness: ReadinessChecks,
  ) {}

  private readonly logger = new Logger('Storage');

  onModuleInit(): void {
    // S15: /health/ready reports storage beside the database and Redis.
    this.readiness.register('storage', () => this.storage.probe());
    // What a process that died mid-write left in the local store's temporary folder goes at start.
    if (this.storage instanceof LocalStorageDriver) {
      void this.storage.sweepTemp().then(
        (removed) => removed > 0 && this.logger.log({ msg: 'stale temporary files removed', count: removed }),
        (err: unknown) => this.logger.warn({ msg: 'temporary files not swept', err: String(err) }),
      );
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.storage.close?.();
  }
}
