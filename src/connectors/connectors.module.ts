import { Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { workerProviders } from '../queue/worker-role.js';
import { ConnectorAliasesController, ConnectorsController } from './connectors.controller.js';
import { ConnectorsService } from './connectors.service.js';
import { ConnectorResolver, ErpGateway } from './erp-gateway.js';
import { ErpSyncService } from './erp-sync.service.js';
import { configureErpPushWorker, ErpPushProcessor } from './jobs/erp-push.processor.js';
import { ConnectorHealthScheduler } from './jobs/health-scheduler.js';

/** ERP connectors (C2): configuration and matching (API), pushes and scheduled health checks (worker). */
@Module({})
export class ConnectorsModule {
  static register(config: AppConfig): DynamicModule {
    if (config.runsWorkers) configureErpPushWorker(config);
    return {
      module: ConnectorsModule,
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
