import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { OutboxEvent } from './entities/outbox-event.entity.js';
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
    await manager.save(manager.create(OutboxEvent, { id, tenant_id: tenantId, event, payload }));
    return payload;
  }
}
