import { Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { workerProviders } from '../queue/worker-role.js';
import { configureSignWorker, SignSdfProcessor } from './jobs/sign-sdf.processor.js';
import { SigningController } from './signing.controller.js';
import { SigningKeysModule } from './signing-keys.module.js';
import { SigningService } from './signing.service.js';
import { SigningThreadsService } from './signing-threads.service.js';

/**
 * Signing and verification of stored documents (F9, S3, S9). The sign-sdf processor exists only in
 * processes that run workers (S16), with its own concurrency (SIGN_SDF_CONCURRENCY).
 */
@Module({})
export class SigningModule {
  static register(config: AppConfig): DynamicModule {
    if (config.runsWorkers) configureSignWorker(config);
    return {
      module: SigningModule,
      imports: [SigningKeysModule],
      controllers: [SigningController],
      // The signing threads start on first use: in API processes, when a produced file is to be signed.
      providers: [SigningService, SigningThreadsService, ...workerProviders(config, [SignSdfProcessor])],
    };
  }
}
