import { context, propagation, trace } from '@opentelemetry/api';

/**
 * The active trace context as BullMQ's telemetry carries it in a job (bullmq-otel: a JSON object of
 * W3C trace headers), or null when nothing is being traced. Work that is queued later from a stored
 * row (the outbox's webhook deliveries) keeps the trace of the change that caused it this way.
 */
export function currentTraceMetadata(): string | null {
  if (!trace.getSpan(context.active())) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? JSON.stringify(carrier) : null;
}
