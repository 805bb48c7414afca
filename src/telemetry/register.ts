/**
 * OpenTelemetry, loaded before anything else of the service (main.ts imports it first and the rest
 * dynamically): when OTEL_EXPORTER_OTLP_ENDPOINT is set, traces of HTTP, express, pg and ioredis (and,
 * through BullMQ's telemetry, of every job) are exported over OTLP/HTTP. ES modules are instrumented
 * through the import-in-the-middle loader hook, which must be registered before they are loaded.
 * The standard OTEL_* variables (service name, sampler, batch delays) apply as documented by OpenTelemetry.
 */
import { register } from 'node:module';

export const tracingEnabled = Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT);

if (tracingEnabled) {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const [
    { NodeSDK },
    { OTLPTraceExporter },
    { HttpInstrumentation },
    { ExpressInstrumentation },
    { PgInstrumentation },
    { IORedisInstrumentation },
  ] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-express'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
  ]);
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ?? 'sdf-service',
    traceExporter: new OTLPTraceExporter(),
    instrumentations: [
      new HttpInstrumentation(),
      new ExpressInstrumentation(),
      new PgInstrumentation(),
      new IORedisInstrumentation(),
    ],
  });
  sdk.start();
  // Flush what is buffered when the process ends (SIGTERM reaches the app's own shutdown hooks first).
  process.once('beforeExit', () => void sdk.shutdown());
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void sdk.shutdown());
}
