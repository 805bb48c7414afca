import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../app.module.js';
import { AppConfig } from '../config/app-config.js';
import { buildOpenApiDocument } from './setup.js';

/**
 * The OpenAPI document of both deployments (the managed one is a superset: it adds /v1), built from
 * the decorators alone: Nest's preview mode wires the modules without creating a provider, so no
 * database, Redis or port is needed. `npm run api:client` turns it into the web front end's client.
 */
export async function openApiDocument(): Promise<Record<string, unknown>> {
  const config = AppConfig.fromEnv({
    DEPLOYMENT_MODE: 'managed',
    JWT_SECRET: 'x'.repeat(64),
    ADMIN_JWT_SECRET: 'y'.repeat(64),
    MASTER_KEY: Buffer.alloc(32, 1).toString('base64'),
    PUBLIC_BASE_URL: 'http://localhost:3000',
    LOG_LEVEL: 'silent',
  });
  const app = await NestFactory.create(AppModule.register(config, {}), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  try {
    return buildOpenApiDocument(app, config.version) as unknown as Record<string, unknown>;
  } finally {
    await app.close();
  }
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const document = JSON.stringify(await openApiDocument(), null, 2) + '\n';
  if (process.argv[2]) writeFileSync(process.argv[2], document);
  else process.stdout.write(document);
}
