import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import {
  createValidationPool,
  DEFAULT_LIMITS,
  type Limits,
  type PoolDataResult,
  type PackInput,
  type PoolLane,
  type PoolProduceResult,
  type PoolVerifyResult,
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

  /**
   * The pid of the pool process that ran the last verification, for diagnostics: it is never this
   * process's pid, since untrusted archives are read in the pool only.
   */
  lastVerifyPid: number | undefined;

  private get started(): ValidationPool {
    this.pool ??= createValidationPool({
      maxWorkers: this.config.env.VALIDATION_POOL_WORKERS,
      timeoutMs: this.config.env.VALIDATION_TIMEOUT_MS,
      maxOldGenerationSizeMb: this.config.env.VALIDATION_MAX_MEMORY_MB,
    });
    return this.pool;
  }

  /**
   * Validates a file (a Buffer or a local path) for a tenant, with that tenant's key lookup and the summary
   * mappings it registered with its schemas (those of `schemaId` when the caller knows meta's schema_id,
   * else all of them; the pool uses the one whose schema the file embeds). `interactive`
   * for a caller that waits (POST /validate): it is served before background files and has a process
   * of its own; within a lane, tenants take turns.
   */
  async validate(
    tenantId: string,
    input: Buffer | string,
    lane: PoolLane,
    schemaId?: string | null,
  ): Promise<ValidationResult> {
    const [keyLookup, summaryMappings] = await Promise.all([
      this.extensions.keyLookupFor(tenantId),
      this.extensions.summaryMappingsFor(tenantId, schemaId),
    ]);
    return this.started.validate(input, {
      keyLookup,
      limits: this.limits,
      lane,
      tenant: tenantId,
      ...(summaryMappings.length > 0 ? { summaryMappings } : {}),
    });
  }

  /**
   * data.json of a stored file (a Buffer or a local path), read in the pool (interactive lane unless
   * told: the summary backfill reads in the background one): written to `output` when given, so its
   * bytes never pass through this process, else returned.
   */
  extractData(
    tenantId: string,
    input: Buffer | string,
    output?: string,
    lane: PoolLane = 'interactive',
  ): Promise<PoolDataResult> {
    return this.started.extractData(input, { limits: this.limits, lane, tenant: tenantId, output });
  }

  /**
   * Rule 10: an SDF file made from data, schema and meta fields in the pool (interactive lane), under
   * the validation budget, written to `output` (a new file) so its bytes never pass through this process.
   */
  produce(
    tenantId: string,
    input: Pick<PackInput, 'data' | 'schema' | 'meta'>,
    output: string,
  ): Promise<PoolProduceResult> {
    return this.started.produce(input, { limits: this.limits, lane: 'interactive', tenant: tenantId, output });
  }

  /** F9 verification of a stored file in the pool (interactive lane), under its time and memory budget. */
  async verify(tenantId: string, input: Buffer | string): Promise<PoolVerifyResult['result']> {
    const keyLookup = await this.extensions.keyLookupFor(tenantId);
    const { result, pid } = await this.started.verify(input, {
      keyLookup,
      limits: this.limits,
      lane: 'interactive',
      tenant: tenantId,
    });
    this.lastVerifyPid = pid;
    return result;
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
