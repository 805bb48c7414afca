import { randomUUID } from 'node:crypto';
import type { INestApplication, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express, { type NextFunction, type Request, type Response } from 'express';
import { AppModule } from './app.module.js';
import { JsonTooDeepError, MAX_JSON_BODY_DEPTH, jsonDepthExceeds } from './common/json-depth.js';
import { JsonLogger } from './common/logger.js';
import { requestContext } from './common/request-context.js';
import type { AppConfig } from './config/app-config.js';
import { ensureDatabase, runMigrations } from './database/data-source.js';
import { mountOpenApi } from './openapi/setup.js';

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
          path: req.path,
          status: res.statusCode,
          duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
        },
        'Http',
      );
    });
    requestContext.run(ctx, next);
  };
}

export async function createApp(config: AppConfig, logger: LoggerService = new JsonLogger(config.env.LOG_LEVEL)) {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.register(config), {
    logger,
    bodyParser: false,
    abortOnError: false,
  });
  app.disable('x-powered-by');
  app.use(requestScope(logger));
  // JSON bodies are small by nature; file uploads are multipart and streamed by their own handler.
  app.use(
    express.json({
      limit: config.env.JSON_BODY_LIMIT_BYTES,
      type: ['application/json', 'application/*+json'],
      verify: (_req, _res, buf) => {
        if (jsonDepthExceeds(buf, MAX_JSON_BODY_DEPTH)) throw new JsonTooDeepError(MAX_JSON_BODY_DEPTH);
      },
    }),
  );
  app.enableShutdownHooks();
  if (config.runsApi) mountOpenApi(app, config.version);
  await app.init();
  return app as INestApplication & NestExpressApplication;
}
