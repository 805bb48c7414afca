import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Periodic } from '../common/periodic.js';
import { BackgroundOutages } from '../queue/outages.js';

/** Months after the current one whose audit_log partitions exist ahead of time. */
export const AUDIT_PARTITION_MONTHS_AHEAD = 3;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * S11: audit_log is partitioned by month (see the audit partitions migration). Entries of a month with no
 * partition land in audit_log_default, from which append-only never lets them move, and the retention
 * command only drops whole monthly partitions: so every process makes the coming months' partitions at
 * start and once a day (audit_log_ensure_partitions is idempotent and serialised in the database). It
 * only ever creates partitions; detaching and dropping is the maintenance command's, under another role.
 */
@Injectable()
export class AuditPartitionKeeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('AuditPartitions');
  // Not fatal: an entry of a month without its partition still lands in audit_log_default.
  private readonly periodic = new Periodic(
    async () => {
      const created = await this.ensure();
      if (created.length) this.logger.log({ msg: 'audit log partitions created', partitions: created });
    },
    (err) => {
      if (!this.outages.failed('audit log partitions', err))
        this.logger.error({ msg: 'audit log partitions could not be created', err: String(err) });
    },
  );

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly outages: BackgroundOutages,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.periodic.run();
    this.periodic.start(DAY_MS);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.periodic.stop();
  }

  /** Creates the missing partitions of this month and the next ones; returns the names created. */
  async ensure(monthsAhead = AUDIT_PARTITION_MONTHS_AHEAD): Promise<string[]> {
    const rows = (await this.ds.query(`SELECT name FROM audit_log_ensure_partitions($1) AS name`, [monthsAhead])) as {
      name: string;
    }[];
    return rows.map((r) => r.name);
  }
}
