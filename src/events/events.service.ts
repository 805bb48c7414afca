import { randomUUID } from 'node:crypto';
import { currentTraceMetadata } from '../telemetry/trace-context.js';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { EventData, EventName, EventPayload } from './events.js';

/**
 * SQL: whether an active webhook of the tenant subscribes to the event (both SQL expressions). The
 * outbox insert uses it to write an event nobody awaits as dispatched already; the dispatcher, to tell
 * which pending events to hand over.
 */
export const subscribedSql = (tenantId: string, event: string) =>
  `EXISTS (SELECT 1 FROM webhooks w WHERE w.tenant_id = ${tenantId} AND w.is_active AND ${event} = ANY(w.events))`;

/** SQL: `dispatched_at` of a new event: null while someone awaits it, else now (nothing to deliver). */
export const dispatchedAtSql = (tenantId: string, event: string) =>
  `CASE WHEN ${subscribedSql(tenantId, event)} THEN NULL ELSE now() END`;

/** An event ready to be written: the row's id, its payload and the trace it continues. */
export interface OutboxRow {
  id: string;
  tenantId: string;
  event: EventName;
  payload: EventPayload;
  traceMetadata: string | null;
}

/**
 * Records domain events in the outbox, inside the caller's transaction: the event exists if and only
 * if the change that caused it committed. Delivery (webhooks) reads the outbox afterwards.
 */
@Injectable()
export class EventsService {
  /** The outbox row of an event, for a caller that writes it in the same statement as its change. */
  build(tenantId: string, event: EventName, data: EventData): OutboxRow {
    const id = randomUUID();
    return {
      id,
      tenantId,
      event,
      payload: {
        id,
        event,
        timestamp: new Date().toISOString(),
        tenant_id: tenantId,
        document_id: data.document_id,
        data,
      },
      traceMetadata: currentTraceMetadata(),
    };
  }

  async record(manager: EntityManager, tenantId: string, event: EventName, data: EventData): Promise<EventPayload> {
    const row = this.build(tenantId, event, data);
    // One INSERT on every state change's path (an entity `save` would first SELECT the row it creates).
    await manager.query(
      `INSERT INTO outbox_events (id, tenant_id, event, payload, trace_metadata, dispatched_at)
       VALUES ($1, $2::uuid, $3, $4, $5, ${dispatchedAtSql('$2::uuid', '$3')})`,
      [row.id, tenantId, event, JSON.stringify(row.payload), row.traceMetadata],
    );
    return row.payload;
  }
}
