import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SealedSecrets } from '../common/sealed-secrets.js';
import type { AppConfig } from '../config/app-config.js';
import { workerProviders } from '../queue/worker-role.js';
import { ConnectorAliasesController, ConnectorsController } from './connectors.controller.js';
import { ConnectorsService } from './connectors.service.js';
import { credentialsAssociatedData } from './credentials.js';
import { Connector } from './entities/connector.entity.js';
import { ErpPush } from './entities/erp-push.entity.js';
import { ConnectorResolver, ErpGateway } from './erp-gateway.js';
import { ErpSyncService } from './erp-sync.service.js';
import { configureErpPushWorker, ErpPushProcessor } from './jobs/erp-push.processor.js';
import { ConnectorHealthScheduler } from './jobs/health-scheduler.js';

/** The entities this module owns (also read by the migration data source). */
export const connectorsEntities = [Connector, ErpPush];

/** ERP connectors (C2): configuration and matching (API), pushes and scheduled health checks (worker). */
@Module({})
export class ConnectorsModule {
  constructor(sealed: SealedSecrets) {
    // S7: credentials are sealed to their connector.
    sealed.register({
      table: 'connectors',
      column: 'credentials_enc',
      inputs: [],
      associatedData: (r) => credentialsAssociatedData(r.id),
    });
  }

  static register(config: AppConfig): DynamicModule {
    if (config.runsWorkers) configureErpPushWorker(config);
    return {
      module: ConnectorsModule,
      imports: [TypeOrmModule.forFeature(connectorsEntities)],
      controllers: [ConnectorsController, ConnectorAliasesController],
      providers: [
        ConnectorsService,
        ErpSyncService,
        ErpGateway,
        ConnectorResolver,
        ...workerProviders(config, [ErpPushProcessor, ConnectorHealthScheduler]),
      ],
      exports: [ConnectorsService],
    };
  }
}
