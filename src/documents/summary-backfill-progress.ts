import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ReadinessChecks } from '../common/readiness.js';
import { summaryBackfillRemaining } from './jobs/summary-backfill.js';

/**
 * The summary backfill's progress in /health/ready's details, in every process (the API answers it, the
 * worker does the work): read from the database, so it is the same whichever process answers.
 */
@Injectable()
export class SummaryBackfillProgress {
  constructor(@InjectDataSource() ds: DataSource, readiness: ReadinessChecks) {
    readiness.registerDetail('summary_backfill', async () => {
      const remaining = await summaryBackfillRemaining(ds);
      return { state: remaining === 0 ? 'done' : 'running', remaining };
    });
  }
}
