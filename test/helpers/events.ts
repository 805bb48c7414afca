import { randomUUID } from 'node:crypto';
import { EventsService } from '../../src/events/events.service.js';
import type { EventData, EventName, EventPayload } from '../../src/events/events.js';
import type { TestApp } from './app.js';

/**
 * Produces a document event exactly the way the documents code does: `EventsService.record` inside a
 * database transaction, so the outbox row commits as a document change would.
 */
export async function recordDocumentEvent(
  t: TestApp,
  tenantId: string,
  event: EventName,
  data: Partial<EventData> = {},
): Promise<EventPayload> {
  const events = t.app.get(EventsService);
  const full: EventData = {
    id: randomUUID(),
    document_id: randomUUID(),
    document_type: 'invoice',
    status: event === 'document.signed' ? 'signed' : event === 'document.uploaded' ? 'pending' : 'valid',
    schema_id: 'invoice/v1',
    ...(event === 'document.signed' ? { algorithm: 'ECDSA-P256' } : {}),
    ...data,
  };
  return t.ds.transaction((m) => events.record(m, tenantId, event, full));
}

/** Registers a webhook through the tenant API and returns its id. */
export async function registerWebhook(
  t: TestApp,
  apiKey: string,
  body: { url: string; secret: string; events: string[] },
): Promise<string> {
  const res = await t.http().post('/webhooks').set('X-API-Key', apiKey).send(body);
  if (res.status !== 201) throw new Error(`webhook registration failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}
