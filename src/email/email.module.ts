import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { workerProviders } from '../queue/worker-role.js';
import { EmailProcessor } from './email.processor.js';
import { MailService } from './mail.service.js';

/** The `email` queue: MailService queues, EmailProcessor (worker roles) sends. */
@Global()
@Module({})
export class EmailModule {
  static register(config: AppConfig): DynamicModule {
    return {
      module: EmailModule,
      providers: [MailService, ...workerProviders(config, [EmailProcessor])],
      exports: [MailService],
    };
  }
}
