import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { CustomLimits, Period, PlanId, PlanRow } from './plans.js';

/** A tenant's plan and Stripe subscription (table tenant_billing). */
export interface TenantBilling {
  tenant_id: string;
  plan_id: PlanId;
  custom: CustomLimits;
  stripe_customer_id: string | null;
  stripe_subscription_id: string | null;
  subscription_status: string | null;
  current_period_start: Date | null;
  current_period_end: Date | null;
  cancel_at_period_end: boolean;
  stripe_state_at: Date | null;
}

export interface UsageRow {
  period_start: Date;
  period_end: Date;
  documents_uploaded: number;
  api_calls: number;
  storage_bytes: number;
  seq: number;
  closed_at: Date | null;
}

/** A committed change of a tenant's bytes stored that the usage meter has not counted yet. */
export interface StorageChange {
  id: string;
  tenantId: string;
  deltaBytes: number;
}

interface RawBilling {
  tenant_id: string;
  plan_id: PlanId;
  custom_documents: string | null;
  custom_api_calls: string | null;
  custom_storage_bytes: string | null;
  stripe_customer_id: string | null;
  stripe_subscription_id: string | null;
  subscription_status: string | null;
  current_period_start: Date | null;
  current_period_end: Date | null;
  cancel_at_period_end: boolean;
  stripe_state_at: Date | null;
}

const num = (v: string | number | null): number | null => (v === null ? null : Number(v));

function toBilling(r: RawBilling): TenantBilling {
  return {
    tenant_id: r.tenant_id,
    plan_id: r.plan_id,
    custom: {
      documents: num(r.custom_documents),
      api_calls: num(r.custom_api_calls),
      storage_bytes: num(r.custom_storage_bytes),
    },
    stripe_customer_id: r.stripe_customer_id,
    stripe_subscription_id: r.stripe_subscription_id,
    subscription_status: r.subscription_status,
    current_period_start: r.current_period_start,
    current_period_end: r.current_period_end,
    cancel_at_period_end: r.cancel_at_period_end,
    stripe_state_at: r.stripe_state_at,
  };
}

/** Changes to a tenant's billing row; absent fields stay as they are. */
export type BillingChange = Partial<Omit<TenantBilling, 'tenant_id' | 'custom'>> & { custom?: CustomLimits };

const COLUMNS: Record<string, string> = {
  plan_id: 'plan_id',
  stripe_customer_id: 'stripe_customer_id',
  stripe_subscription_id: 'stripe_subscription_id',
  subscription_status: 'subscription_status',
  current_period_start: 'current_period_start',
  current_period_end: 'current_period_end',
  cancel_at_period_end: 'cancel_at_period_end',
  stripe_state_at: 'stripe_state_at',
};

/** Plans, tenant billing rows, usage periods and applied Stripe events; every tenant query is scoped by tenant. */
@Injectable()
export class BillingRepository {
  private plansCache: Map<PlanId, PlanRow> | undefined;

  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  get manager(): EntityManager {
    return this.ds.manager;
  }

  transaction<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.ds.transaction(work);
  }

  /** Plans are seeded by migration and never change at run time, so they are read once. */
  async plans(): Promise<Map<PlanId, PlanRow>> {
    if (!this.plansCache) {
      const rows = (await this.ds.query(
        `SELECT id, name, rpm, documents, api_calls, storage_bytes, custom FROM plans ORDER BY rank`,
      )) as (Omit<PlanRow, 'documents' | 'api_calls' | 'storage_bytes'> & Record<string, string | null>)[];
      this.plansCache = new Map(
        rows.map((r) => [
          r.id,
          {
            id: r.id,
            name: r.name,
            rpm: r.rpm,
            custom: r.custom,
            documents: num(r.documents),
            api_calls: num(r.api_calls),
            storage_bytes: num(r.storage_bytes),
          },
        ]),
      );
    }
    return this.plansCache;
  }

  async plan(id: PlanId): Promise<PlanRow> {
    const plan = (await this.plans()).get(id);
    if (!plan) throw new Error(`plan ${id} is not seeded`);
    return plan;
  }

  async findForTenant(
    tenantId: string,
    m: EntityManager = this.ds.manager,
    lock = false,
  ): Promise<TenantBilling | null> {
    const rows = (await m.query(`SELECT * FROM tenant_billing WHERE tenant_id = $1${lock ? ' FOR UPDATE' : ''}`, [
      tenantId,
    ])) as RawBilling[];
    return rows[0] ? toBilling(rows[0]) : null;
  }

  async findByCustomer(customerId: string, m: EntityManager, lock = false): Promise<TenantBilling | null> {
    const rows = (await m.query(
      `SELECT * FROM tenant_billing WHERE stripe_customer_id = $1${lock ? ' FOR UPDATE' : ''}`,
      [customerId],
    )) as RawBilling[];
    return rows[0] ? toBilling(rows[0]) : null;
  }

  /** A tenant without a row (created before plans existed) is on Free; this makes the row, once. */
  async ensure(m: EntityManager, tenantId: string, plan: PlanId = 'free'): Promise<void> {
    await m.query(
      `INSERT INTO tenant_billing (tenant_id, plan_id) VALUES ($1, $2) ON CONFLICT (tenant_id) DO NOTHING`,
      [tenantId, plan],
    );
  }

  async update(m: EntityManager, tenantId: string, change: BillingChange): Promise<void> {
    const sets: string[] = [];
    const values: unknown[] = [tenantId];
    for (const [field, column] of Object.entries(COLUMNS)) {
      const v = (change as Record<string, unknown>)[field];
      if (v === undefined) continue;
      values.push(v);
      sets.push(`${column} = $${values.length}`);
    }
    if (change.custom) {
      for (const [field, column] of [
        ['documents', 'custom_documents'],
        ['api_calls', 'custom_api_calls'],
        ['storage_bytes', 'custom_storage_bytes'],
      ] as const) {
        values.push(change.custom[field]);
        sets.push(`${column} = $${values.length}`);
      }
    }
    if (sets.length === 0) return;
    await m.query(`UPDATE tenant_billing SET ${sets.join(', ')}, updated_at = now() WHERE tenant_id = $1`, values);
  }

  /**
   * Bytes stored now (the sum of the tenant's document sizes, the exact figure Redis is seeded from) and
   * the storage changes not yet counted, which that sum already holds: read in one statement, so both
   * come from the same snapshot.
   */
  async storedBytes(tenantId: string): Promise<{ bytes: number; uncounted: string[] }> {
    const rows = (await this.ds.query(
      `SELECT (SELECT COALESCE(SUM(file_size_bytes), 0)::bigint FROM documents WHERE tenant_id = $1) AS bytes,
              ARRAY(SELECT id::text FROM storage_changes WHERE tenant_id = $1) AS uncounted`,
      [tenantId],
    )) as { bytes: string; uncounted: string[] }[];
    return { bytes: Number(rows[0]?.bytes ?? 0), uncounted: rows[0]?.uncounted ?? [] };
  }

  /**
   * Takes storage changes to count (M3): one document's, or the oldest `limit` of every tenant. They are
   * locked, handed to `count` one by one and deleted in one transaction, so a change is deleted only once
   * counted and a failed count leaves it for the next try. Rows another process holds are skipped: it is
   * counting them.
   */
  async takeStorageChanges(
    scope: { tenantId: string; documentId: string } | { limit: number },
    count: (change: StorageChange) => Promise<void>,
  ): Promise<StorageChange[]> {
    return this.ds.transaction(async (m) => {
      const rows = (
        'limit' in scope
          ? await m.query(
              `SELECT id, tenant_id, delta_bytes FROM storage_changes ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
              [scope.limit],
            )
          : await m.query(
              `SELECT id, tenant_id, delta_bytes FROM storage_changes WHERE tenant_id = $1 AND document_id = $2
                 FOR UPDATE SKIP LOCKED`,
              [scope.tenantId, scope.documentId],
            )
      ) as { id: string; tenant_id: string; delta_bytes: string }[];
      const changes = rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, deltaBytes: Number(r.delta_bytes) }));
      for (const change of changes) await count(change);
      if (changes.length > 0) {
        await m.query(`DELETE FROM storage_changes WHERE id = ANY($1::uuid[])`, [changes.map((c) => c.id)]);
      }
      return changes;
    });
  }

  async usage(tenantId: string, periodStart: Date): Promise<UsageRow | null> {
    const rows = (await this.ds.query(`SELECT * FROM usage_periods WHERE tenant_id = $1 AND period_start = $2`, [
      tenantId,
      periodStart,
    ])) as Record<string, string | Date | null>[];
    const r = rows[0];
    if (!r) return null;
    return {
      period_start: r.period_start as Date,
      period_end: r.period_end as Date,
      documents_uploaded: Number(r.documents_uploaded),
      api_calls: Number(r.api_calls),
      storage_bytes: Number(r.storage_bytes),
      seq: Number(r.seq),
      closed_at: r.closed_at as Date | null,
    };
  }

  async maxSeq(tenantId: string): Promise<number> {
    const rows = (await this.ds.query(`SELECT COALESCE(MAX(seq), 0) AS seq FROM usage_periods WHERE tenant_id = $1`, [
      tenantId,
    ])) as { seq: string }[];
    return Number(rows[0]?.seq ?? 0);
  }

  /**
   * Writes a period's counters as Redis had them at change `seq`. A row written from a later change is
   * never overwritten by an earlier one (two instances flushing at once); `closed` marks the period over.
   */
  async upsertUsage(
    tenantId: string,
    period: Period,
    u: Omit<UsageRow, 'period_start' | 'period_end' | 'closed_at'>,
    closed: boolean,
  ): Promise<void> {
    await this.ds.query(
      `INSERT INTO usage_periods (tenant_id, period_start, period_end, documents_uploaded, api_calls, storage_bytes, seq, closed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $8::boolean THEN now() END)
       ON CONFLICT (tenant_id, period_start) DO UPDATE
         SET documents_uploaded = EXCLUDED.documents_uploaded, api_calls = EXCLUDED.api_calls,
             storage_bytes = EXCLUDED.storage_bytes, seq = EXCLUDED.seq, period_end = EXCLUDED.period_end,
             closed_at = COALESCE(usage_periods.closed_at, EXCLUDED.closed_at), updated_at = now()
         WHERE usage_periods.seq <= EXCLUDED.seq`,
      [tenantId, period.start, period.end, u.documents_uploaded, u.api_calls, u.storage_bytes, u.seq, closed],
    );
  }

  /** Records a Stripe event id; false when it was recorded before (a replay). */
  async recordEvent(
    m: EntityManager,
    e: { id: string; type: string; tenantId: string | null; created: Date; outcome: string },
  ): Promise<boolean> {
    const rows = (await m.query(
      `INSERT INTO billing_events (id, type, tenant_id, event_created_at, outcome) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (id) DO NOTHING RETURNING id`,
      [e.id, e.type, e.tenantId, e.created, e.outcome],
    )) as unknown[];
    return rows.length === 1;
  }
}
