import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ValidationExtensions } from '../documents/validation-extensions.js';
import { SchemaRegistryService } from './schema-registry.service.js';

/**
 * S14: every validation (the job and POST /validate) reports whether the embedded schema equals the
 * one registered for meta.json's schema_id. The embedded schema stays authoritative: this only reports.
 * It also hands the validation the summary mappings registered with the tenant's schemas: a document
 * whose schema is a registered one (the same schema id and content) is summarized by its mapping.
 */
@Injectable()
export class RegistryMatchEnricher implements OnModuleInit {
  constructor(
    private readonly extensions: ValidationExtensions,
    private readonly registry: SchemaRegistryService,
  ) {}

  onModuleInit(): void {
    this.extensions.useSummaryMappings((tenantId, schemaId) => this.registry.summaryMappings(tenantId, schemaId));
    this.extensions.addEnricher(async (tenantId, result) => ({
      registry_match: await this.registry.matchFor(tenantId, result.meta?.schema_id, result.schema_sha256),
    }));
  }
}
