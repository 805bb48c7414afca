import { Module } from '@nestjs/common';
import { RegistryMatchEnricher } from './registry-match.enricher.js';
import { SchemaRegistryService } from './schema-registry.service.js';
import { SchemasController } from './schemas.controller.js';

/** S14: exports SchemaRegistryService so validation can report `registry_match`. */
@Module({
  controllers: [SchemasController],
  providers: [SchemaRegistryService, RegistryMatchEnricher],
  exports: [SchemaRegistryService],
})
export class SchemasModule {}
