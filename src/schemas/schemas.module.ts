import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RegisteredSchema } from './entities/registered-schema.entity.js';
import { RegistryMatchEnricher } from './registry-match.enricher.js';
import { SchemaRegistryService } from './schema-registry.service.js';
import { SchemasController } from './schemas.controller.js';

/** The entities this module owns (also read by the migration data source). */
export const schemasEntities = [RegisteredSchema];

/** S14: exports SchemaRegistryService so validation can report `registry_match`. */
@Module({
  imports: [TypeOrmModule.forFeature(schemasEntities)],
  controllers: [SchemasController],
  providers: [SchemaRegistryService, RegistryMatchEnricher],
  exports: [SchemaRegistryService],
})
export class SchemasModule {}
