/** SDF-SPEC Events: the four event names; nothing else is ever emitted or accepted. */
export const EVENT_NAMES = ['document.uploaded', 'document.validated', 'document.signed', 'document.deleted'] as const;
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
