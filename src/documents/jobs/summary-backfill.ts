import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { isInfrastructureError } from '../../common/infrastructure-errors.js';
import { Periodic } from '../../common/periodic.js';
import { AppConfig } from '../../config/app-config.js';
import { DataBudgetError, isSdfError, WorkerTaskError } from '../../sdf/index.js';
import {
  registeredMappingFor,
  summarizeDataBytes,
  type DocumentSummary,
  type RegisteredSummaryMapping,
  type SummaryMapping,
} from '../../sdf/summary.js';
import { STORAGE_DRIVER, StorageNotFoundError, type StorageDriver } from '../../storage/storage-driver.js';
import { summaryParams, summarySetSql } from '../documents-search.js';
import { ValidationExtensions } from '../validation-extensions.js';
import { ValidationPoolService } from '../validation-pool.service.js';

interface BackfillRow {
  id: string;
  tenant_id: string;
  storage_key: string;
  meta: unknown;
  schema_id: string | null;
  /** The schema the file embeds, as its validation hashed it: a registered schema's mapping applies. */
  schema_sha256: string | null;
}

/** The documents judged before summaries existed (the partial index documents_unsummarized_idx). */
const UNSUMMARIZED = `summarized_at IS NULL AND status <> 'pending'`;

/** How many documents are left to summarize; read by /health/ready in every process. */
export async function summaryBackfillRemaining(ds: DataSource): Promise<number> {
  const [row] = (await ds.query(`SELECT count(*)::int AS n FROM documents WHERE ${UNSUMMARIZED}`)) as { n: number }[];
  return row?.n ?? 0;
}

/**
 * Gives the documents stored before summaries existed their summary, by itself, in the worker, while
 * the service keeps serving: a batch every SUMMARY_BACKFILL_INTERVAL_MS while any are left. The work
 * list is the database's own state (`summarized_at` null on a judged document), so a restart resumes
 * where it stopped; a batch's rows are locked while it runs (FOR UPDATE SKIP LOCKED), so two workers
 * never take the same document, and the write is conditional on `summarized_at` still being null, so no
 * document is summarized twice. New documents are summarized by their validation job, never here.
 * Spans tenants on purpose (as the pending sweeper does): it names no tenant.
 */
@Injectable()
export class SummaryBackfill implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('SummaryBackfill');
  private readonly periodic = new Periodic(
    () => this.tick(),
    (err) => {
      const level = isInfrastructureError(err) ? 'debug' : 'warn';
      this.logger[level]({ msg: 'summary backfill batch failed; the next one tries again', err: String(err) });
    },
  );
  /** Documents this process has summarized. */
  summarized = 0;
  private finished = false;

  constructor(
    @Inject(AppConfig) private readonly config: AppConfig,
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(STORAGE_DRIVER) private readonly storage: StorageDriver,
    private readonly pool: ValidationPoolService,
    private readonly extensions: ValidationExtensions,
  ) {}

  onApplicationBootstrap(): void {
    this.periodic.start(this.config.env.SUMMARY_BACKFILL_INTERVAL_MS);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.periodic.stop();
  }

  /** Batches until none is left or the interval's worth of work is done; the next tick goes on. */
  private async tick(): Promise<void> {
    if (this.finished) return;
    const until = performance.now() + this.config.env.SUMMARY_BACKFILL_INTERVAL_MS;
    while (performance.now() < until) {
      if ((await this.runBatch()) === 0) break;
    }
  }

  /** One batch; returns how many documents it summarized (0: none left, or all others' are locked). */
  async runBatch(): Promise<number> {
    const batch = this.config.env.SUMMARY_BACKFILL_BATCH;
    const done = await this.ds.transaction(async (m) => {
      const rows = (await m.query(
        `SELECT id, tenant_id, storage_key, meta, schema_id, validation->>'schema_sha256' AS schema_sha256
           FROM documents WHERE ${UNSUMMARIZED}
          ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [batch],
      )) as BackfillRow[];
      let written = 0;
      // The tenants' registered mappings, once a tenant and schema id in a batch.
      const mappings = new Map<string, Promise<RegisteredSummaryMapping[]>>();
      for (const row of rows) {
        let mapping: SummaryMapping | undefined;
        if (row.schema_id && row.schema_sha256) {
          const key = `${row.tenant_id} ${row.schema_id}`;
          if (!mappings.has(key)) mappings.set(key, this.extensions.summaryMappingsFor(row.tenant_id, row.schema_id));
          mapping = registeredMappingFor(await mappings.get(key), row.schema_id, row.schema_sha256);
        }
        const summary = await this.summaryOf(row, mapping);
        const updated = (await m.query(
          `UPDATE documents SET ${summarySetSql(3)}
            WHERE tenant_id = $1 AND id = $2 AND summarized_at IS NULL RETURNING id`,
          [row.tenant_id, row.id, ...summaryParams(summary)],
        )) as [unknown[], number] | unknown[];
        const count = Array.isArray(updated[0]) ? (updated[0] as unknown[]).length : updated.length;
        written += count;
      }
      return written;
    });
    this.summarized += done;
    if (done > 0) {
      const remaining = await summaryBackfillRemaining(this.ds);
      this.logger.log({ msg: 'summary backfill', summarized: done, total: this.summarized, remaining });
      if (remaining === 0) this.logger.log({ msg: 'summary backfill finished', total: this.summarized });
    } else if ((await summaryBackfillRemaining(this.ds)) === 0) {
      this.finished = true;
    }
    return done;
  }

  /**
   * data.json read out of the stored file in the pool (background lane), summarized with the meta.json
   * read at upload and the tenant's mapping when the file's schema is a registered one. A file whose data.json cannot be read gets none (as at validation); a storage
   * outage is thrown, and the batch is tried again.
   */
  private async summaryOf(row: BackfillRow, mapping: SummaryMapping | undefined): Promise<DocumentSummary | null> {
    const input = this.storage.localPath
      ? this.storage.localPath(row.storage_key)
      : await this.storage.getBuffer(row.storage_key).catch((err: unknown) => {
          if (err instanceof StorageNotFoundError) return null;
          throw err;
        });
    if (input === null || (typeof input === 'string' && !(await this.storage.exists(row.storage_key)))) {
      this.logger.warn({ msg: 'stored file missing; no summary', tenant_id: row.tenant_id, id: row.id });
      return null;
    }
    try {
      const { data } = await this.pool.extractData(row.tenant_id, input, undefined, 'background');
      return summarizeDataBytes(data, row.meta, this.pool.limits, mapping);
    } catch (err) {
      if (err instanceof WorkerTaskError || err instanceof DataBudgetError || isSdfError(err)) return null;
      throw err;
    }
  }
}
