import { Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { workerProviders } from '../queue/worker-role.js';
import { WebhookDeliveryProcessor } from './jobs/webhook-delivery.processor.js';
import { OutboxDispatcher } from './outbox-dispatcher.js';
import { WebhookSecretHashes } from './secret-hash.js';
import { WebhookResolver } from './ssrf.js';
import { AdminWebhooksController, WebhooksController } from './webhooks.controller.js';
import { WebhooksService } from './webhooks.service.js';

/** Registration (API), and in worker processes the outbox dispatcher and the delivery processor. */
@Module({})
export class WebhooksModule {
  static register(config: AppConfig): DynamicModule {
    return {
      module: WebhooksModule,
      controllers: [WebhooksController, AdminWebhooksController],
      providers: [
        WebhooksService,
        WebhookResolver,
        WebhookSecretHashes,
        ...workerProviders(config, [OutboxDispatcher, WebhookDeliveryProcessor]),
      ],
      exports: [WebhooksService],
    };
  }
}
