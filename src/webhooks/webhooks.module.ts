import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SealedSecrets } from '../common/sealed-secrets.js';
import type { AppConfig } from '../config/app-config.js';
import { workerProviders } from '../queue/worker-role.js';
import { Webhook } from './entities/webhook.entity.js';
import { WebhookDeliveryProcessor } from './jobs/webhook-delivery.processor.js';
import { OutboxDispatcher } from './outbox-dispatcher.js';
import { WebhookSecretHashes } from './secret-hash.js';
import { WebhookResolver } from './ssrf.js';
import { AdminWebhooksController, WebhooksController } from './webhooks.controller.js';
import { secretAssociatedData, WebhooksService } from './webhooks.service.js';

/** The entities this module owns (also read by the migration data source). */
export const webhooksEntities = [Webhook];

/** Registration (API), and in worker processes the outbox dispatcher and the delivery processor. */
@Module({})
export class WebhooksModule {
  constructor(sealed: SealedSecrets) {
    // S7: a signing secret is sealed to its webhook.
    sealed.register({
      table: 'webhooks',
      column: 'secret_enc',
      inputs: [],
      associatedData: (r) => secretAssociatedData(r.id),
    });
  }

  static register(config: AppConfig): DynamicModule {
    return {
      module: WebhooksModule,
      imports: [TypeOrmModule.forFeature(webhooksEntities)],
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
