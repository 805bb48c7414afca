import 'reflect-metadata';
import { createApp, prepareDatabase } from './bootstrap.js';
import { JsonLogger } from './common/logger.js';
import { AppConfig } from './config/app-config.js';
import { ConfigError } from './config/env.js';

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = AppConfig.fromEnv();
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
  const app = await createApp(config, logger);
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

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
