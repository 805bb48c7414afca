import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { QueryFailedError, type DataSource, type EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { preparedQuery } from '../database/prepared.js';
import { AppError } from '../common/errors.js';
import { requestContext } from '../common/request-context.js';
import { canonicalJson, compileSchema, isSdfError, sha256Hex } from '../sdf/index.js';
import { readSummaryMapping, type RegisteredSummaryMapping, type SummaryMapping } from '../sdf/summary.js';
import { SCHEMA_ID_PATTERN, type CreateSchemaDto } from './dto/schema.dto.js';
import { RegisteredSchema } from './entities/registered-schema.entity.js';

export interface SchemaActor {
  actor: string;
  ip: string | null;
}

type MappingRow = Pick<RegisteredSchema, 'schema_id' | 'content_hash'> & { summary_mapping: SummaryMapping };
type VersionRow = Pick<RegisteredSchema, 'schema_id' | 'content_hash'> & { summary_mapping: SummaryMapping | null };

/** A summary mapping as sent, checked; every problem a 400 naming its field under /summary_mapping. */
function checkSummaryMapping(value: unknown): SummaryMapping {
  const { mapping, problems } = readSummaryMapping(value, '/summary_mapping');
  if (mapping === null) throw AppError.badRequest('Invalid summary mapping', problems);
  return mapping;
}

/** Deeper than any schema a person writes; keeps recursive walkers (canonical JSON, ajv) far from the stack limit. */
export const MAX_SCHEMA_DEPTH = 64;

function isUniqueViolation(err: unknown): boolean {
  return err instanceof QueryFailedError && (err.driverError as { code?: string }).code === '23505';
}

/**
 * Nesting depth of a JSON value and whether any key or string holds U+0000, found without recursion so
 * hostile input cannot overflow the stack. Stops once the depth limit is crossed.
 */
function scan(value: unknown, depthLimit: number): { depth: number; nul: boolean } {
  let depth = 0;
  let nul = false;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0 && depth <= depthLimit) {
    const [node, level] = stack.pop()!;
    if (typeof node === 'string') {
      nul ||= node.includes('\0');
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    depth = Math.max(depth, level);
    for (const [key, child] of Object.entries(node as object)) {
      nul ||= key.includes('\0');
      stack.push([child, level + 1]);
    }
  }
  return { depth, nul };
}

/**
 * S14: per-tenant schema registry. Every query is scoped by the tenant; another tenant's schema is
 * indistinguishable from a missing one (S5).
 */
@Injectable()
export class SchemaRegistryService {
  /** The versions read within a job or request (its context object), for its second ask. */
  private readonly versionsInWork = new WeakMap<object, Map<string, Promise<VersionRow[]>>>();

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
  ) {}

  async register(tenantId: string, input: CreateSchemaDto, by: SchemaActor): Promise<RegisteredSchema> {
    const contentHash = this.checkSchema(input.schema);
    const summaryMapping = input.summary_mapping === undefined ? null : checkSummaryMapping(input.summary_mapping);
    try {
      return await this.ds.transaction(async (m) => {
        const row = await m.save(
          m.create(RegisteredSchema, {
            tenant_id: tenantId,
            schema_id: input.schema_id,
            version: input.version,
            schema: input.schema,
            content_hash: contentHash,
            summary_mapping: summaryMapping,
          }),
        );
        await this.audit.record(m, {
          tenantId,
          action: 'schema.create',
          actor: by.actor,
          ipAddress: by.ip,
          resourceId: row.id,
          metadata: { schema_id: row.schema_id, version: row.version, content_hash: contentHash },
        });
        return row;
      });
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw AppError.conflict(`Schema '${input.schema_id}' version '${input.version}' is already registered`);
      }
      throw err;
    }
  }

  /** Newest first (S14). */
  list(tenantId: string): Promise<RegisteredSchema[]> {
    return this.ds.manager.find(RegisteredSchema, {
      // The list shows no schema bodies; do not load them.
      select: { id: true, schema_id: true, version: true, created_at: true, summary_mapping: true },
      where: { tenant_id: tenantId },
      order: { created_at: 'DESC', id: 'DESC' },
    });
  }

  /** The latest version is the most recently registered one, whatever its version string says. */
  async get(tenantId: string, schemaId: string, version?: string): Promise<RegisteredSchema> {
    const row = await this.ds.manager.findOne(RegisteredSchema, {
      where: { tenant_id: tenantId, schema_id: schemaId, ...(version === undefined ? {} : { version }) },
      order: { created_at: 'DESC', id: 'DESC' },
    });
    if (!row) throw AppError.notFound('Schema');
    return row;
  }

  /**
   * S14 `registry_match` for an archive whose meta.json names `schemaId` and whose schema.json has
   * the canonical SHA-256 `embeddedSchemaHash` (ValidationResult.schema_sha256): `null` when the tenant
   * has not registered that id, `true` when any registered version has the same content, else `false`.
   * Informational only: the embedded schema stays authoritative (SDF-SPEC rule 6).
   */
  async matchFor(
    tenantId: string,
    schemaId: string | null | undefined,
    embeddedSchemaHash: string | null | undefined,
    manager: EntityManager = this.ds.manager,
  ): Promise<boolean | null> {
    if (!schemaId || !SCHEMA_ID_PATTERN.test(schemaId)) return null;
    const rows = await this.versionsOf(tenantId, schemaId, manager);
    if (rows.length === 0) return null;
    if (!embeddedSchemaHash) return false;
    const wanted = embeddedSchemaHash.toLowerCase();
    return rows.some((r) => r.content_hash === wanted);
  }

  /**
   * The summary mappings registered with the tenant's schemas, for the validation: those of `schemaId`
   * (meta's schema_id, when known), else all of them; one a schema id and content (the most recently
   * registered version's, when two versions have the same content).
   */
  async summaryMappings(
    tenantId: string,
    schemaId: string | undefined,
    manager: EntityManager = this.ds.manager,
  ): Promise<RegisteredSummaryMapping[]> {
    if (schemaId !== undefined && !SCHEMA_ID_PATTERN.test(schemaId)) return [];
    if (schemaId !== undefined) {
      // The versions come newest first within a content: the first mapping of each content is its newest.
      const seen = new Set<string>();
      const rows = (await this.versionsOf(tenantId, schemaId, manager)).filter(
        (r) => r.summary_mapping !== null && !seen.has(r.content_hash) && seen.add(r.content_hash),
      );
      return rows.map((r) => ({ schema_id: r.schema_id, schema_sha256: r.content_hash, mapping: r.summary_mapping! }));
    }
    const rows = await preparedQuery<MappingRow>(
      this.ds,
      'sdf_schema_mappings_all',
      `SELECT DISTINCT ON (schema_id, content_hash) schema_id, content_hash, summary_mapping FROM schemas
        WHERE tenant_id = $1 AND summary_mapping IS NOT NULL
        ORDER BY schema_id, content_hash, created_at DESC, id DESC`,
      [tenantId],
      manager,
    );
    return rows.map((r) => ({ schema_id: r.schema_id, schema_sha256: r.content_hash, mapping: r.summary_mapping }));
  }

  /**
   * Every registered version of `schemaId` (content hash and mapping), newest first within a content. A
   * validation asks twice, for the mappings before it runs and for S14 `registry_match` after: within one
   * job or request (its context) the versions are read once.
   */
  private versionsOf(tenantId: string, schemaId: string, manager: EntityManager): Promise<VersionRow[]> {
    const read = () =>
      preparedQuery<VersionRow>(
        this.ds,
        'sdf_schema_versions',
        `SELECT schema_id, content_hash, summary_mapping FROM schemas
          WHERE tenant_id = $1 AND schema_id = $2
          ORDER BY content_hash, created_at DESC, id DESC`,
        [tenantId, schemaId],
        manager,
      );
    const work = requestContext.get();
    if (!work || manager !== this.ds.manager) return read();
    let versions = this.versionsInWork.get(work);
    if (!versions) this.versionsInWork.set(work, (versions = new Map()));
    const key = `${tenantId} ${schemaId}`;
    let rows = versions.get(key);
    if (!rows) {
      rows = read();
      versions.set(key, rows);
      // A failed read is not kept: a second ask reads again.
      rows.catch(() => versions.delete(key));
    }
    return rows;
  }

  /** Size, depth and F6 compilation; returns the content hash. Every failure is 400 VALIDATION_ERROR. */
  private checkSchema(schema: Record<string, unknown>): string {
    const { depth, nul } = scan(schema, MAX_SCHEMA_DEPTH);
    if (depth > MAX_SCHEMA_DEPTH) {
      throw AppError.badRequest('Schema is nested too deeply', [
        { path: '/schema', message: `nesting deeper than ${MAX_SCHEMA_DEPTH} levels` },
      ]);
    }
    const canonical = canonicalJson(schema);
    const limit = this.config.env.SCHEMA_MAX_BYTES;
    if (Buffer.byteLength(canonical) > limit) {
      throw AppError.badRequest('Schema is too large', [
        { path: '/schema', message: `canonical JSON exceeds ${limit} bytes` },
      ]);
    }
    // PostgreSQL jsonb cannot hold U+0000; refuse it here instead of failing in the database.
    if (nul) {
      throw AppError.badRequest('Schema contains a NUL character', [
        { path: '/schema', message: 'U+0000 is not allowed in a registered schema' },
      ]);
    }
    try {
      compileSchema(schema);
    } catch (err) {
      if (!isSdfError(err)) throw err;
      // F6: the same compiler as validation, so a schema accepted here also compiles inside an archive.
      throw AppError.badRequest(
        'Schema does not compile as JSON Schema Draft 2020-12',
        err.details.map((d) => ({ path: `/schema${d.path}`, message: d.message })),
      );
    }
    return sha256Hex(canonical);
  }
}
