import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import {
  createValidationPool,
  DEFAULT_LIMITS,
  type Limits,
  type ValidationPool,
  type ValidationResult,
} from '../sdf/index.js';
import { ValidationExtensions } from './validation-extensions.js';

/**
 * One bounded validation pool per process (F6 safety budget: untrusted bytes are judged off the main
 * thread, within a time and memory budget), created on first use and destroyed on shutdown.
 */
@Injectable()
export class ValidationPoolService implements OnApplicationShutdown {
  private pool: ValidationPool | undefined;
  readonly limits: Limits;

  constructor(
    @Inject(AppConfig) private readonly config: AppConfig,
    private readonly extensions: ValidationExtensions,
  ) {
    this.limits = {
      ...DEFAULT_LIMITS,
      maxEntryBytes: config.env.ZIP_MAX_ENTRY_BYTES,
      maxTotalBytes: config.env.ZIP_MAX_TOTAL_BYTES,
      maxEntries: config.env.ZIP_MAX_ENTRIES,
    };
  }

  /** Validates a file (a Buffer or a local path) for a tenant, with that tenant's key lookup. */
  async validate(tenantId: string, input: Buffer | string): Promise<ValidationResult> {
    this.pool ??= createValidationPool({
      maxWorkers: this.config.env.VALIDATION_POOL_WORKERS,
      timeoutMs: this.config.env.VALIDATION_TIMEOUT_MS,
      maxOldGenerationSizeMb: this.config.env.VALIDATION_MAX_MEMORY_MB,
    });
    const keyLookup = await this.extensions.keyLookupFor(tenantId);
    return this.pool.validate(input, { keyLookup, limits: this.limits });
  }

  /** Ends the worker threads; a validation still running rejects (its job is retried elsewhere). */
  async destroy(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.destroy();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.destroy();
  }
}
