import type { EntitySubscriberInterface, TransactionStartEvent } from 'typeorm';
import { EventSubscriber } from 'typeorm';
import { requestContext } from '../common/request-context.js';

/**
 * The one place that opens tenant transactions: every transaction started while a request or a job acts
 * for a tenant (the request context, filled by the authentication step and by each job) first names that
 * tenant to PostgreSQL, for the rest of the transaction only. The row-level security policies then show
 * and accept that tenant's rows alone, whatever a query forgets to say (migration RowLevelSecurity).
 * Without a tenant (operators, sign-in before the tenant is known, sweeps across tenants) nothing is set.
 */
@EventSubscriber()
export class TenantScopeSubscriber implements EntitySubscriberInterface {
  async afterTransactionStart(event: TransactionStartEvent): Promise<void> {
    const tenantId = requestContext.get()?.tenantId;
    if (!tenantId) return;
    await event.queryRunner.query(`SELECT set_config('app.tenant_id', $1, true)`, [tenantId]);
  }
}

/**
 * Runs `work` acting for `tenantId`: its transactions see only that tenant's rows, and its log lines name
 * the tenant and `requestId` (a job's public id).
 */
export function actingForTenant<T>(tenantId: string | undefined, work: () => T, requestId: string): T {
  if (!tenantId) return work();
  const current = requestContext.get();
  return requestContext.run({ requestId: current?.requestId ?? requestId, tenantId }, work);
}
