import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDatabaseFromTemplate, dropDatabase, testDatabaseUrl } from './helpers/database.js';
import { distCli, distMain, freePort, requireBuild, runNode, startNode, stop } from './helpers/processes.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { waitUntil } from './helpers/wait.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: { stringValue?: string; intValue?: string } }[];
}
const SERVER = 2;
const CONSUMER = 5;

/** A small OTLP/HTTP (JSON) trace receiver on loopback: what a collector would be. */
function startOtlpReceiver(spans: OtlpSpan[]): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const parsed = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
        for (const rs of parsed.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const attr = (span: OtlpSpan, key: string) => span.attributes?.find((a) => a.key === key)?.value.stringValue;

describe('OpenTelemetry traces', () => {
  const spans: OtlpSpan[] = [];
  let otlp: Server;
  let receiver: WebhookReceiver;
  let service: ChildProcess;
  let database: string;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let base: string;

  beforeAll(async () => {
    requireBuild(distMain);
    otlp = await startOtlpReceiver(spans);
    receiver = await WebhookReceiver.start(() => 200);
    database = await createDatabaseFromTemplate(inject('templateDatabase'));
    dir = mkdtempSync(join(tmpdir(), 'sdf-tracing-'));
    env = {
      PATH: process.env.PATH,
      DATABASE_URL: testDatabaseUrl(database),
      DATABASE_RUN_MIGRATIONS: 'false',
      REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
      REDIS_PREFIX: `sdfo_${randomBytes(5).toString('hex')}`,
      JWT_SECRET: randomBytes(32).toString('hex'),
      ADMIN_JWT_SECRET: randomBytes(32).toString('hex'),
      MASTER_KEY: randomBytes(32).toString('base64'),
      STORAGE_LOCAL_DIR: join(dir, 'storage'),
      VALIDATION_POOL_WORKERS: '1',
      WEBHOOK_DISPATCH_INTERVAL_MS: '100',
    };
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const { port: otlpPort } = otlp.address() as { port: number };
    const started = await startNode(
      [distMain],
      {
        ...env,
        PORT: String(port),
        HOST: '127.0.0.1',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlpPort}`,
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
      (line) => line.includes('"listening"'),
    );
    service = started.child;
  });
  afterAll(async () => {
    if (service) await stop(service);
    await receiver?.close();
    await new Promise((r) => otlp?.close(r));
    if (database) await dropDatabase(database);
    rmSync(dir, { recursive: true, force: true });
  });

  it('an upload, its validation job and its webhook delivery form one trace', async () => {
    const tenant = await runNode([distCli, 'admin', 'create-tenant', '--name', 'Traced', '--slug', 'traced'], env);
    expect(tenant.code).toBe(0);
    const key = await runNode([distCli, 'admin', 'create-key', '--tenant', 'traced', '--name', 'k'], env);
    const apiKey = (JSON.parse(key.stdout) as { key: string }).key;
    const hook = await fetch(`${base}/webhooks`, {
      method: 'POST',
      headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: receiver.url(), secret: 'whsec-tracing-0123456789', events: ['document.validated'] }),
    });
    expect(hook.status).toBe(201);

    const form = new FormData();
    form.append('file', new Blob([(await buildSdf()).archive]), 'invoice.sdf');
    const uploaded = await fetch(`${base}/upload`, { method: 'POST', headers: { 'X-API-Key': apiKey }, body: form });
    expect(uploaded.status).toBe(201);
    await receiver.waitFor(1, 30_000);

    const found = await waitUntil(
      () => {
        const upload = spans.find((s) => s.kind === SERVER && attr(s, 'http.route') === '/upload');
        if (!upload) return null;
        const trace = spans.filter((s) => s.traceId === upload.traceId);
        const validation = trace.find((s) => s.kind === CONSUMER && s.name.includes('validate-sdf'));
        const delivery = trace.find((s) => s.kind === CONSUMER && s.name.includes('webhook-delivery'));
        return validation && delivery ? { upload, trace, validation, delivery } : null;
      },
      'one trace with the upload, the validation job and the webhook delivery',
      30_000,
    ).catch((err: Error) => {
      throw new Error(
        `${err.message}; spans: ${JSON.stringify(spans.map((s) => [s.name, s.kind, s.traceId.slice(0, 8)]))}`,
      );
    });
    // The job spans descend from the request, not merely share an id: each has a parent inside the trace.
    const ids = new Set(found.trace.map((s) => s.spanId));
    for (const span of [found.validation, found.delivery]) expect(ids.has(span.parentSpanId ?? '')).toBe(true);
    expect(found.trace.some((s) => s.name.startsWith('pg') || s.name.includes('INSERT'))).toBe(true);
  });
});
