import type { Provider } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';

/**
 * S16: processors exist only in processes whose role runs workers (`worker` or `all`). Feature
 * modules with a `jobs/` folder expose `static register(config)` and list their processors through this.
 */
export function workerProviders(config: AppConfig, providers: Provider[]): Provider[] {
  return config.runsWorkers ? providers : [];
}
