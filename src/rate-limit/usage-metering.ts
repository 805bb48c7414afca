import { AppError } from '../common/errors.js';
import type { AuthTenant } from '../tenants/entities/tenant.entity.js';
import type { RateDecision } from './rate-limit.service.js';

export interface MeteredDecision extends RateDecision {
  /** Set when the request is within the rate limit but over the API-call quota. */
  quotaRetryAfterSeconds?: number;
  /** True for the first refusal by the quota in the period (one audit entry a quota and period). */
  firstQuotaRefusal?: boolean;
}

export type Reservation =
  | { ok: true; periodStart: string; bytes: number }
  | { ok: false; retryAfterSeconds: number; quota: string; firstRefusal: boolean };

/**
 * What the core asks of usage metering: the rate limit of a request and whether it fits the plan's
 * quotas, an upload's document and bytes, and the bytes a signature adds or a delete frees. The core
 * owns this port; self-hosted, `UnmeteredUsage` answers (the tenant's own rate limit, no quota), and the
 * managed deployment's billing provides the metered one (M3).
 */
export abstract class UsageMetering {
  /** The rate limit and, unless `metered` is false, the API-call count and quota. */
  abstract consumeRequest(tenant: AuthTenant, metered: boolean): Promise<MeteredDecision>;

  /** Takes one document and `bytes` of storage from the period's quota, or says which quota is spent. */
  abstract reserveUpload(tenantId: string, bytes: number): Promise<Reservation>;

  /** Undoes a reservation whose upload did not become a document. */
  abstract release(tenantId: string, reservation: Extract<Reservation, { ok: true }>): Promise<void>;

  /**
   * Whether a signing and a delete record their change of bytes stored (a `storage_changes` row in the
   * transaction that signs or deletes the document) for `countStorageChanges` to count: true where storage
   * is metered.
   */
  abstract readonly recordsStorageChanges: boolean;

  /**
   * Counts the document's recorded, committed changes of bytes stored that are not counted yet, each
   * exactly once however often it is called (after a death or a failure between the commit and the
   * count, the sign job's next run or the usage flush counts what is left).
   */
  abstract countStorageChanges(tenantId: string, documentId: string): Promise<void>;

  /** A quota refusal is audited, once per quota and period (the decision says which refusal is the first). */
  abstract auditRefusal(
    tenantId: string,
    quota: string,
    by: { actor: string; ip: string | null },
    request: { method: string; path: string },
  ): Promise<void>;
}

/** M3: 429 QUOTA_EXCEEDED, Retry-After in seconds to the end of the billing period. */
export function quotaExceeded(quota: string, retryAfterSeconds: number): AppError {
  const base = AppError.of('QUOTA_EXCEEDED', `The plan's ${quota} quota for this billing period is used up`);
  return new AppError(
    base.status,
    base.code,
    base.message,
    [{ path: `/quota/${quota}`, message: 'quota exceeded until the period ends' }],
    { 'Retry-After': String(retryAfterSeconds) },
  );
}
