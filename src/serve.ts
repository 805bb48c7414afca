import 'reflect-metadata';
import { createApp, prepareDatabase } from './bootstrap.js';
import { installGracefulShutdown } from './common/graceful-shutdown.js';
import { JsonLogger } from './common/logger.js';
import { AppConfig } from './config/app-config.js';
import { ConfigError } from './config/env.js';
import { startMetricsServer } from './metrics/metrics-server.js';
import { MetricsService } from './metrics/metrics.service.js';

/** The service process: configuration, database, then the API and/or the workers by PROCESS_ROLE. */
export async function serve(): Promise<void> {
  await main().catch((err: unknown) => {
    process.stderr.write(`fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = AppConfig.fromEnv(process.env, { generateSecrets: true });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(err.message + '\n');
      process.exit(1);
    }
    throw err;
  }
  const logger = new JsonLogger(config.env.LOG_LEVEL);
  if (config.secrets.generatedFile) {
    logger.warn(
      {
        msg: 'using generated secrets; set JWT_SECRET, ADMIN_JWT_SECRET and MASTER_KEY in production',
        file: config.secrets.generatedFile,
      },
      'Bootstrap',
    );
  }
  await prepareDatabase(config, logger);
  const app = await createApp(config, logger, {}, { shutdownHooks: false });
  installGracefulShutdown(app, { timeoutMs: config.env.SHUTDOWN_TIMEOUT_MS, logger });
  if (config.env.METRICS_PORT !== undefined) {
    const server = await startMetricsServer(config, app.get(MetricsService));
    app.getHttpServer().on('close', () => server.close());
    logger.log({ msg: 'metrics listening', port: config.env.METRICS_PORT }, 'Bootstrap');
  }
  if (config.runsApi) {
    await app.listen(config.env.PORT, config.env.HOST);
    logger.log(
      {
        msg: 'listening',
        url: await app.getUrl(),
        role: config.env.PROCESS_ROLE,
        mode: config.env.DEPLOYMENT_MODE,
        version: config.version,
      },
      'Bootstrap',
    );
  } else {
    logger.log({ msg: 'worker started', role: config.env.PROCESS_ROLE, version: config.version }, 'Bootstrap');
  }
}
