import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Periodic } from '../../common/periodic.js';
import { requestContext } from '../../common/request-context.js';
import { AppConfig } from '../../config/app-config.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { BackgroundOutages } from '../../queue/outages.js';
import { RedisService } from '../../redis/redis.module.js';
import { STORAGE_DRIVER, type StorageDriver, type StoredObject } from '../../storage/storage-driver.js';

/** Keys checked against PostgreSQL at once. */
const BATCH = 500;
export const ORPHAN_SWEEP_INTERVAL_MS = 60 * 60 * 1000;
/**
 * How long one worker holds the sweep: a worker that dies in a sweep holds back the others for one
 * interval at most. A sweep that outlasts it may meet another one; both only remove what has no record.
 */
const LEASE_MS = ORPHAN_SWEEP_INTERVAL_MS;

// documentKey and documentDataKey (storage-driver.ts): the only objects this sweep may remove.
const DOCUMENT_OBJECT =
  /^tenants\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\/documents\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(sdf|data\.json)$/;

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export type OrphanKind = 'sdf' | 'data';

interface Candidate {
  key: string;
  documentId: string;
  kind: OrphanKind;
}

/**
 * S13: an upload stores its file before its record and a delete removes the record before the file, so a
 * process that dies (or a store whose answer is cut after it saved the object) between the two leaves a
 * file without a record; so does a data.json copy kept while its document was deleted. In processes that
 * run workers, every hour, one of them (a Redis lease) lists the stored document objects and removes those
 * written more than STORAGE_ORPHAN_GRACE_MS ago whose document has no record. The grace is far above the
 * time between storing an upload's file and committing its record, so an upload in flight is never
 * touched; an object whose key is not a document's is never touched either.
 */
@Injectable()
export class OrphanSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('OrphanSweeper');
  private readonly periodic = new Periodic(
    () => this.sweep(),
    (err) => {
      if (!this.outages.failed('orphan sweep', err)) this.logger.warn({ msg: 'orphan sweep failed', err: String(err) });
    },
  );
  private readonly release: (...args: string[]) => Promise<unknown>;

  constructor(
    @Inject(AppConfig) private readonly config: AppConfig,
    @Inject(STORAGE_DRIVER) private readonly storage: StorageDriver,
    @InjectDataSource() private readonly ds: DataSource,
    private readonly redis: RedisService,
    private readonly metrics: MetricsService,
    private readonly outages: BackgroundOutages,
  ) {
    this.release = redis.script('sdfOrphanSweepRelease', 1, RELEASE);
  }

  onApplicationBootstrap(): void {
    this.periodic.start(ORPHAN_SWEEP_INTERVAL_MS);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.periodic.stop();
  }

  /**
   * One pass, unless another worker holds the sweep (then null); returns how many objects were removed.
   */
  async sweep(graceMs = this.config.env.STORAGE_ORPHAN_GRACE_MS): Promise<number | null> {
    // The records are read across tenants: a tenant named here would hide the others' records, and their
    // files would look orphaned.
    if (requestContext.get()?.tenantId) throw new Error('the orphan sweep must not run for a tenant');
    const lock = this.redis.key('orphan-sweep');
    const token = randomBytes(16).toString('hex');
    if ((await this.redis.client.set(lock, token, 'PX', LEASE_MS, 'NX')) !== 'OK') return null;
    try {
      return await this.removeOrphans(Date.now() - graceMs);
    } finally {
      await this.release(lock, token).catch(() => undefined);
    }
  }

  private async removeOrphans(writtenBefore: number): Promise<number> {
    const removed: Record<OrphanKind, number> = { sdf: 0, data: 0 };
    let batch: Candidate[] = [];
    const settle = async () => {
      for (const orphan of await this.withoutRecord(batch)) {
        await this.storage.delete(orphan.key);
        removed[orphan.kind]++;
      }
      batch = [];
    };
    for await (const object of this.storage.list('tenants/')) {
      const candidate = candidateOf(object, writtenBefore);
      if (!candidate) continue;
      batch.push(candidate);
      if (batch.length >= BATCH) await settle();
    }
    await settle();
    const count = removed.sdf + removed.data;
    if (count > 0) {
      this.logger.log({ msg: 'orphaned stored objects removed', count, files: removed.sdf, data_copies: removed.data });
      this.metrics.storageOrphansRemoved.inc({ kind: 'sdf' }, removed.sdf);
      this.metrics.storageOrphansRemoved.inc({ kind: 'data' }, removed.data);
    }
    return count;
  }

  /** The candidates whose document has no record, in any tenant (no tenant is set: see sweep). */
  private async withoutRecord(batch: Candidate[]): Promise<Candidate[]> {
    if (batch.length === 0) return [];
    const rows = (await this.ds.query(`SELECT id FROM documents WHERE id = ANY($1::uuid[])`, [
      [...new Set(batch.map((c) => c.documentId))],
    ])) as { id: string }[];
    const recorded = new Set(rows.map((r) => r.id));
    return batch.filter((c) => !recorded.has(c.documentId));
  }
}

function candidateOf(object: StoredObject, writtenBefore: number): Candidate | null {
  if (object.modifiedAt.getTime() >= writtenBefore) return null;
  const match = DOCUMENT_OBJECT.exec(object.key);
  if (!match) return null;
  return { key: object.key, documentId: match[1]!, kind: match[2] === 'sdf' ? 'sdf' : 'data' };
}
