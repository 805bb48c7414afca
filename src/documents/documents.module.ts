import { Global, Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AppConfig } from '../config/app-config.js';
import { workerProviders } from '../queue/worker-role.js';
import { SchemasModule } from '../schemas/schemas.module.js';
import { DocumentsController } from './documents.controller.js';
import { DocumentsRepository } from './documents.repository.js';
import { DocumentsService } from './documents.service.js';
import { SdfDocument } from './entities/document.entity.js';
import { OrphanSweeper } from './jobs/orphan-sweeper.js';
import { PendingSweeper } from './jobs/pending-sweeper.js';
import { SummaryBackfill } from './jobs/summary-backfill.js';
import { SummaryBackfillProgress } from './summary-backfill-progress.js';
import { configureValidateWorker, ValidateSdfProcessor } from './jobs/validate-sdf.processor.js';
import { ProduceController, ProduceV1Controller } from './produce.controller.js';
import { ProduceHandler } from './produce.handler.js';
import { UploadHandler } from './upload.handler.js';
import { UploadSlots } from './upload-slots.js';
import { ValidationExtensions } from './validation-extensions.js';
import { ValidationPoolService } from './validation-pool.service.js';

/** The entities this module owns (also read by the migration data source). */
export const documentsEntities = [SdfDocument];

/**
 * The document lifecycle. Global so later features (signing, schema registry) can reach the
 * repository and register with `ValidationExtensions`.
 */
@Global()
@Module({})
export class DocumentsModule {
  static register(config: AppConfig): DynamicModule {
    if (config.runsWorkers) configureValidateWorker(config);
    return {
      module: DocumentsModule,
      // The registry's schemas for POST /sdf/produce.
      imports: [SchemasModule, TypeOrmModule.forFeature(documentsEntities)],
      // S16: /v1 exists only on the managed deployment.
      controllers: [DocumentsController, ProduceController, ...(config.isManaged ? [ProduceV1Controller] : [])],
      providers: [
        ProduceHandler,
        DocumentsRepository,
        DocumentsService,
        UploadHandler,
        UploadSlots,
        ValidationExtensions,
        ValidationPoolService,
        SummaryBackfillProgress,
        ...workerProviders(config, [ValidateSdfProcessor, PendingSweeper, OrphanSweeper, SummaryBackfill]),
      ],
      exports: [DocumentsRepository, DocumentsService, ValidationExtensions, ValidationPoolService],
    };
  }
}
