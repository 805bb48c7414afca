import { randomUUID } from 'node:crypto';
import type { INestApplication, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Server } from 'node:http';
import helmet from 'helmet';
import { AppModule, type AppOverrides } from './app.module.js';
import { contentSecurityPolicy } from './common/content-security-policy.js';
import { requestBodyGuard } from './common/request-body.js';
import { webApp } from './web/web-app.js';
import { JsonTooDeepError, MAX_JSON_BODY_DEPTH, jsonDepthExceeds } from './common/json-depth.js';
import { JsonLogger } from './common/logger.js';
import { assertMasterKeys } from './common/master-key-check.js';
import { MetricsService } from './metrics/metrics.service.js';
import { requestContext } from './common/request-context.js';
import type { AppConfig } from './config/app-config.js';
import { ensureDatabase, runMigrations } from './database/data-source.js';
import { mountOpenApi } from './openapi/setup.js';
import { AuditService } from './audit/audit.service.js';
import { DASHBOARD_PATH, queueDashboard } from './queue/dashboard.js';
import { ALL_QUEUES } from './queue/queues.js';
import { RedisService } from './redis/redis.module.js';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { DataSource } from 'typeorm';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** `npm start` on a fresh machine: create the database if missing, then run pending migrations. */
export async function prepareDatabase(config: AppConfig, logger: LoggerService): Promise<void> {
  if (config.env.DATABASE_AUTO_CREATE && (await ensureDatabase(config.env.DATABASE_URL))) {
    logger.log({ msg: 'database created' }, 'Bootstrap');
  }
  if (config.env.DATABASE_RUN_MIGRATIONS) {
    const ran = await runMigrations(config.env.DATABASE_URL);
    if (ran.length) logger.log({ msg: 'migrations applied', migrations: ran }, 'Bootstrap');
  }
}

/**
 * The path the client asked for: a router mounted on a prefix (the queue dashboard) shortens `req.path`
 * to the part below it. The query is left out: it may carry a one-time token.
 */
export function requestedPath(req: Request): string {
  const url = req.originalUrl || req.url;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** Request id (from X-Request-Id when sane, else fresh) and one structured log line a request. */
function requestScope(logger: LoggerService) {
  return (req: Request, res: Response, next: NextFunction) => {
    const header = req.headers['x-request-id'];
    const requestId = typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
    res.setHeader('X-Request-Id', requestId);
    const ctx = { requestId } as { requestId: string; tenantId?: string };
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      logger.log(
        {
          msg: 'request',
          request_id: ctx.requestId,
          tenant_id: ctx.tenantId,
          method: req.method,
          path: requestedPath(req),
          status: res.statusCode,
          duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
        },
        'Http',
      );
    });
    requestContext.run(ctx, next);
  };
}

/** Express `trust proxy` from TRUST_PROXY: off, true, a hop count, or a list of addresses and subnets. */
export function trustProxySetting(value: string): boolean | number | string[] {
  const v = value.trim();
  if (v === '' || v === 'false') return false;
  if (v === 'true') return true;
  if (/^\d+$/.test(v)) return Number(v);
  return v.split(',').map((p) => p.trim());
}

/**
 * Node's own defaults let a client hold a connection for minutes, and S15's health routes take no
 * credentials. Headers get a short bound (slow-header attacks); a whole request a long one, so a 50 MB
 * upload on a slow link still fits; a connection that falls silent is cut sooner than that.
 */
export function applyServerTimeouts(server: Server, config: AppConfig): void {
  const env = config.env;
  server.headersTimeout = env.HTTP_HEADERS_TIMEOUT_MS;
  server.requestTimeout = env.HTTP_REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = env.HTTP_KEEP_ALIVE_TIMEOUT_MS;
  server.timeout = env.HTTP_IDLE_TIMEOUT_MS;
  // Header and request time-outs are enforced by a sweep at this interval (Node's default, 30 s, would
  // let a 20 s header bound run to 50 s). A constructor option, which Nest does not pass, that Node reads
  // from the server when it starts listening.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(
    30_000,
    Math.max(100, Math.floor(env.HTTP_HEADERS_TIMEOUT_MS / 4)),
  );
}

export async function createApp(
  config: AppConfig,
  logger: LoggerService = new JsonLogger(config.env.LOG_LEVEL),
  overrides: AppOverrides = {},
  /** The service process installs its own bounded drain (graceful-shutdown.ts) instead of Nest's hooks. */
  options: { shutdownHooks?: boolean } = {},
) {
  // S7: refuse to start with a master key that is not the one the stored secrets were sealed with.
  await assertMasterKeys(config.env.DATABASE_URL, config.secrets);
  const server = express();
  // Paths match exactly as written: express would otherwise route /ADMIN/... and /list/ to /admin/... and /list.
  // (The authentication step reads route metadata, not the path; this keeps one spelling per route.)
  server.set('case sensitive routing', true);
  server.set('strict routing', true);
  server.set('trust proxy', trustProxySetting(config.env.TRUST_PROXY));
  const pinoLogger = logger instanceof JsonLogger ? logger.pino : undefined;
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.register(config, overrides, pinoLogger),
    new ExpressAdapter(server),
    {
      logger,
      bodyParser: false,
      abortOnError: false,
    },
  );
  app.disable('x-powered-by');
  applyServerTimeouts(app.getHttpServer() as Server, config);
  // Before anything reads a body: a refusal given before the body is in closes the connection, and a
  // body that trickles is cut, on every route (JSON and multipart alike).
  app.use(requestBodyGuard({ windowMs: config.env.UPLOAD_BODY_STALL_MS, minBytes: config.env.UPLOAD_BODY_MIN_BYTES }));
  app.use(helmet({ contentSecurityPolicy: false }));
  app.use(contentSecurityPolicy());
  app.use(requestScope(logger));
  app.use(app.get(MetricsService).httpMiddleware());
  // JSON bodies are small by nature; file uploads are multipart and streamed by their own handler.
  app.use(
    express.json({
      limit: config.env.JSON_BODY_LIMIT_BYTES,
      type: ['application/json', 'application/*+json'],
      verify: (req, _res, buf) => {
        if (jsonDepthExceeds(buf, MAX_JSON_BODY_DEPTH)) throw new JsonTooDeepError(MAX_JSON_BODY_DEPTH);
        // Signed webhooks (Stripe) are verified over the exact bytes received, not a re-serialisation.
        (req as typeof req & { rawBody?: Buffer }).rawBody = buf;
      },
    }),
  );
  if (options.shutdownHooks !== false) app.enableShutdownHooks();
  if (config.runsApi) {
    app.use(webApp());
    mountOpenApi(app, config.version);
    mountQueueDashboard(app, config);
  }
  await app.init();
  return app as INestApplication & NestExpressApplication;
}

/** The operators' queue dashboard (src/queue/dashboard.ts): its own guard, one-time links, an audit entry per login. */
function mountQueueDashboard(app: NestExpressApplication, config: AppConfig): void {
  const redis = app.get(RedisService);
  const audit = app.get(AuditService);
  const ds = app.get(DataSource);
  app.use(
    DASHBOARD_PATH,
    queueDashboard({
      adminSecret: config.secrets.adminJwtSecret,
      redis: redis.client,
      usedLinkKey: (jti) => redis.key('dashboard-link', jti),
      queues: ALL_QUEUES.map((name) => app.get<Queue>(getQueueToken(name), { strict: false })),
      onLogin: (subject, req) =>
        audit.record(ds.manager, {
          tenantId: null,
          action: 'admin.dashboard_login',
          actor: `admin:${subject}`,
          ipAddress: req.ip ?? null,
        }),
    }),
  );
}
