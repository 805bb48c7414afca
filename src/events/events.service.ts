import { randomUUID } from 'node:crypto';
import { currentTraceMetadata } from '../telemetry/trace-context.js';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { EventData, EventName, EventPayload } from './events.js';

/**
 * Records domain events in the outbox, inside the caller's transaction: the event exists if and only
 * if the change that caused it committed. Delivery (webhooks) reads the outbox afterwards.
 */
@Injectable()
export class EventsService {
  async record(manager: EntityManager, tenantId: string, event: EventName, data: EventData): Promise<EventPayload> {
    const id = randomUUID();
    const payload: EventPayload = {
      id,
      event,
      timestamp: new Date().toISOString(),
      tenant_id: tenantId,
      document_id: data.document_id,
      data,
    };
    // One INSERT on every state change's path (an entity `save` would first SELECT the row it creates).
    await manager.query(
      `INSERT INTO outbox_events (id, tenant_id, event, payload, trace_metadata) VALUES ($1, $2, $3, $4, $5)`,
      [id, tenantId, event, JSON.stringify(payload), currentTraceMetadata()],
    );
    return payload;
  }
}
