import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { authTenantColumns, Tenant, type AuthTenant } from '../tenants/entities/tenant.entity.js';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import { API_KEY_PATTERN, apiKeyMatches, KEY_PREFIX_LENGTH, mintApiKey } from './api-key-format.js';
import { ApiKey } from './entities/api-key.entity.js';
import { tenantPool } from '../database/tenant-scope.js';

export interface CreatedApiKey {
  record: ApiKey;
  key: string;
}

export interface VerifiedKey {
  key: ApiKey;
  tenant: AuthTenant;
}

@Injectable()
export class ApiKeysService {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  async create(
    manager: EntityManager,
    tenantId: string,
    input: { name?: string | null; expiresAt?: Date | null },
  ): Promise<CreatedApiKey> {
    const minted = mintApiKey();
    const record = manager.create(ApiKey, {
      tenant_id: tenantId,
      key_prefix: minted.prefix,
      key_salt: minted.salt,
      key_hash: minted.hash,
      name: input.name ?? null,
      expires_at: input.expiresAt ?? null,
      revoked_at: null,
    });
    await manager.save(record);
    return { record, key: minted.key };
  }

  listForTenant(tenantId: string): Promise<ApiKey[]> {
    return this.ds.manager.find(ApiKey, { where: { tenant_id: tenantId }, order: { created_at: 'DESC', id: 'DESC' } });
  }

  /**
   * S6: look up by prefix, compare the salted hash timing-safe, then check revocation and expiry
   * against the row as it is now (a revoked key fails on its very next use: no cache).
   */
  async verify(presented: string): Promise<VerifiedKey | null> {
    if (!API_KEY_PATTERN.test(presented)) return null;
    // Every authenticated request comes here: one prepared statement (no query builder, no entity
    // mapping) through a function that sees every tenant's keys by itself, so the connection keeps the
    // tenant it is named for and the request's own statements need not name it again.
    const { rows } = await tenantPool(this.ds).queryInOwnScope<Record<string, unknown>>({
      name: 'sdf_api_keys_by_prefix',
      text: this.verifySql(),
      values: [presented.slice(0, KEY_PREFIX_LENGTH)],
    });
    const now = Date.now();
    for (const row of rows) {
      const candidate = Object.assign(new ApiKey(), pick(row, 'k.'));
      if (!apiKeyMatches(presented, candidate.key_salt, candidate.key_hash)) continue;
      if (candidate.revoked_at) return null;
      if (candidate.expires_at && candidate.expires_at.getTime() <= now) return null;
      return { key: candidate, tenant: Object.assign(new Tenant(), pick(row, 't.')) };
    }
    return null;
  }

  private sql: string | undefined;

  /** The key and its tenant (as AuthTenant), the entities' columns (from their metadata) under a prefix. */
  private verifySql(): string {
    if (this.sql) return this.sql;
    const as = (alias: string) => (c: ColumnMetadata) =>
      `(found.${alias}).${c.databaseName} AS "${alias}.${c.propertyName}"`;
    const columns = [...this.ds.getMetadata(ApiKey).columns.map(as('k')), ...authTenantColumns(this.ds).map(as('t'))];
    this.sql = `SELECT ${columns.join(', ')} FROM sdf_api_keys_by_prefix($1) found`;
    return this.sql;
  }
}

/** The fields of a row whose names start with `prefix`, without it. */
function pick(row: Record<string, unknown>, prefix: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(row)) if (name.startsWith(prefix)) out[name.slice(prefix.length)] = value;
  return out;
}
