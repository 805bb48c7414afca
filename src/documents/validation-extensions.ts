import { Injectable } from '@nestjs/common';
import type { KeyLookup, ValidationResult, VerifyResult } from '../sdf/index.js';
import type { RegisteredSummaryMapping } from '../sdf/summary.js';

/** What the record keeps of a validation run (and what GET /sdf/:id shows as `validation`). */
export interface StoredValidation {
  valid: boolean;
  checks: ValidationResult['checks'];
  warnings: string[];
  error: NonNullable<ValidationResult['error']> | null;
  signature: VerifyResult | null;
  schema_sha256: string | null;
  /** S14: embedded schema.json equals the registered one for meta's schema_id; null when not judged. */
  registry_match: boolean | null;
  [extra: string]: unknown;
}

/** Supplies the tenant's signing keys to signature verification (F9 `trusted`). */
export type KeyLookupProvider = (tenantId: string) => KeyLookup | undefined | Promise<KeyLookup | undefined>;

/**
 * Signs a file made by POST /sdf/produce with the tenant's active key: reads `path`, writes the signed
 * file to the new file `output`, and names the key it used.
 */
export type ProducedFileSigner = (
  tenantId: string,
  path: string,
  output: string,
) => Promise<{ key_id: string; algorithm: string }>;

/**
 * A tenant's summary mappings registered with its schemas: those of `schemaId` when the caller knows the
 * document's schema id (the job: meta.json was read at upload), else all of the tenant's.
 */
export type SummaryMappingProvider = (
  tenantId: string,
  schemaId: string | undefined,
) => Promise<RegisteredSummaryMapping[]>;

/** Adds fields to a stored validation result (S14 `registry_match`), given the tenant and the core result. */
export type ValidationEnricher = (tenantId: string, result: ValidationResult) => Promise<Record<string, unknown>>;

/**
 * The seam through which later features take part in validation without the documents feature
 * knowing them: the signing feature registers a key lookup for a tenant's keys (rotated ones
 * included) and the signer of produced files, the schema registry an enricher that sets
 * `registry_match`. The lookup and the enricher run in the validation
 * job and in POST /validate. Defaults: no tenant keys (signatures verify against their embedded key
 * and are untrusted) and `registry_match: null`.
 */
@Injectable()
export class ValidationExtensions {
  private keyLookupProvider: KeyLookupProvider | undefined;
  private readonly enrichers: ValidationEnricher[] = [];
  private producedFileSigner: ProducedFileSigner | undefined;
  private summaryMappingProvider: SummaryMappingProvider | undefined;

  /** The signing feature signs produced files asked to be signed (POST /sdf/produce with `sign`). */
  useSigner(signer: ProducedFileSigner): void {
    this.producedFileSigner = signer;
  }

  get signer(): ProducedFileSigner | undefined {
    return this.producedFileSigner;
  }

  useKeyLookup(provider: KeyLookupProvider): void {
    this.keyLookupProvider = provider;
  }

  /** The schema registry supplies the mappings tenants registered with their schemas. */
  useSummaryMappings(provider: SummaryMappingProvider): void {
    this.summaryMappingProvider = provider;
  }

  /** `schemaId` null: the document names no schema id, so no registered mapping can be its schema's. */
  async summaryMappingsFor(tenantId: string, schemaId?: string | null): Promise<RegisteredSummaryMapping[]> {
    if (schemaId === null || !this.summaryMappingProvider) return [];
    return this.summaryMappingProvider(tenantId, schemaId);
  }

  addEnricher(enricher: ValidationEnricher): void {
    this.enrichers.push(enricher);
  }

  async keyLookupFor(tenantId: string): Promise<KeyLookup | undefined> {
    return this.keyLookupProvider?.(tenantId);
  }

  /** The record's form of a core result, with every registered enricher applied. */
  async toStored(tenantId: string, result: ValidationResult): Promise<StoredValidation> {
    const stored: StoredValidation = {
      valid: result.valid,
      checks: result.checks,
      warnings: result.warnings,
      error: result.error ?? null,
      signature: result.signature ?? null,
      schema_sha256: result.schema_sha256 ?? null,
      registry_match: null,
    };
    for (const enrich of this.enrichers) Object.assign(stored, await enrich(tenantId, result));
    return stored;
  }
}
