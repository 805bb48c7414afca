import { statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { Global, Inject, Logger, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiskOutages } from '../common/disk-outages.js';
import { Periodic } from '../common/periodic.js';
import { AppConfig } from '../config/app-config.js';
import { NotReady, ReadinessChecks } from '../common/readiness.js';
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
    connectTimeoutMs: env.S3_CONNECT_TIMEOUT_MS,
    socketTimeoutMs: env.S3_SOCKET_TIMEOUT_MS,
    maxAttempts: env.S3_MAX_ATTEMPTS,
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
    @Inject(AppConfig) private readonly config: AppConfig,
  ) {}

  private readonly logger = new Logger('Storage');
  private readonly sweeps = new Periodic(
    () => this.sweep(false),
    (err) => this.logger.warn({ msg: 'temporary files not swept', err: String(err) }),
  );

  async onModuleInit(): Promise<void> {
    // S15: /health/ready reports storage beside the database and Redis.
    this.readiness.register('storage', () => this.probe());
    if (!(this.storage instanceof LocalStorageDriver)) return;
    // What a process that died mid-write left in the local store's temporary folder goes at start,
    // before this process writes any, and then every minute.
    await this.sweep(true).catch((err: unknown) =>
      this.logger.warn({ msg: 'temporary files not swept', err: String(err) }),
    );
    this.sweeps.start(TEMP_SWEEP_INTERVAL_MS);
  }

  /**
   * S15: the store answers (for the local store: a file written and removed), and each disk files are
   * written to has STORAGE_MIN_FREE_BYTES free. A probe that passes ends an episode of refused writes.
   */
  private async probe(): Promise<void> {
    await this.storage.probe();
    const min = this.config.env.STORAGE_MIN_FREE_BYTES;
    if (min > 0) {
      for (const folder of this.diskFolders()) {
        const free = await freeBytes(folder);
        if (free !== null && free < min) {
          throw new NotReady(`free space ${free} bytes is below STORAGE_MIN_FREE_BYTES (${min})`);
        }
      }
    }
    DiskOutages.shared.cleared();
  }

  /** The folders files are written to on this machine: the local store, and the upload spool if apart. */
  private diskFolders(): string[] {
    const env = this.config.env;
    const folders = this.storage instanceof LocalStorageDriver ? [this.storage.root] : [];
    const spool = env.UPLOAD_TMP_DIR ?? (this.storage.spoolDir ? undefined : tmpdir());
    if (spool !== undefined) folders.push(spool);
    return folders;
  }

  private async sweep(atStart: boolean): Promise<void> {
    if (!(this.storage instanceof LocalStorageDriver)) return;
    // A live upload writes at least every UPLOAD_BODY_STALL_MS (or is cut); three of them and a minute
    // at least is a file nobody writes any more.
    const idleMs = Math.max(60_000, 3 * this.config.env.UPLOAD_BODY_STALL_MS);
    const removed = await this.storage.sweepTemp(idleMs, { atStart });
    if (removed > 0) this.logger.log({ msg: 'stale temporary files removed', count: removed });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.sweeps.stop();
    await this.storage.close?.();
  }
}

const TEMP_SWEEP_INTERVAL_MS = 60_000;

/** Bytes an unprivileged writer may still use on the folder's file system; null when it is not there yet. */
async function freeBytes(folder: string): Promise<number | null> {
  const info = await statfs(folder).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  });
  return info === null ? null : info.bavail * info.bsize;
}
