import type { EventName } from '../../events/events.js';

/** Data of one `webhook-delivery` job: one event for one webhook. The secret is never put in Redis. */
export interface WebhookDeliveryJobData {
  tenant_id: string;
  webhook_id: string;
  event_id: string;
  event: EventName;
  document_id: string;
  /** The S10 payload serialised once at dispatch: every retry sends (and signs) the same bytes. */
  body: string;
}

/** BullMQ custom ids may not contain ':'; one job per (event, webhook) makes a second enqueue a no-op. */
export function deliveryJobId(eventId: string, webhookId: string): string {
  return `${eventId}_${webhookId}`;
}
