/** SDF-SPEC Events: the specification's four event names, unchanged. */
export const SPEC_EVENT_NAMES = [
  'document.uploaded',
  'document.validated',
  'document.signed',
  'document.deleted',
] as const;

/**
 * The service's own document events beyond the specification's four: a signing that ended for good without
 * signing, and an ERP push that finished (C2). Delivered only to webhooks that name them (SDF-SPEC Events:
 * unsubscribed events are not delivered), so a receiver written to the specification never meets them.
 */
export const EXTENSION_EVENT_NAMES = ['document.signing_failed', 'document.erp_pushed'] as const;

/** Every event name the service emits and accepts (webhook subscriptions, the stream's `types`). */
export const EVENT_NAMES = [...SPEC_EVENT_NAMES, ...EXTENSION_EVENT_NAMES] as const;
export type EventName = (typeof EVENT_NAMES)[number];

export function isEventName(value: unknown): value is EventName {
  return typeof value === 'string' && (EVENT_NAMES as readonly string[]).includes(value);
}

/** S10: `data` carries the record id (`id`, what the API's paths take) and meta.json's `document_id`. */
export interface EventData {
  id: string;
  document_id: string;
  document_type: string | null;
  status: string;
  schema_id: string | null;
  algorithm?: string | null;
  [extra: string]: unknown;
}

/** S10: one payload serving both forms of SDF-SPEC: document_id at the top and in data. */
export interface EventPayload {
  id: string;
  event: EventName;
  timestamp: string;
  tenant_id: string;
  document_id: string;
  data: EventData;
}
