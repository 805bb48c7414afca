import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { Tenant } from '../tenants/entities/tenant.entity.js';
import { API_KEY_PATTERN, apiKeyMatches, KEY_PREFIX_LENGTH, mintApiKey } from './api-key-format.js';
import { ApiKey } from './entities/api-key.entity.js';

export interface CreatedApiKey {
  record: ApiKey;
  key: string;
}

export interface VerifiedKey {
  key: ApiKey;
  tenant: Tenant;
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
    const candidates = await this.ds.manager
      .createQueryBuilder(ApiKey, 'k')
      .innerJoinAndMapOne('k.tenant', Tenant, 't', 't.id = k.tenant_id')
      .where('k.key_prefix = :prefix', { prefix: presented.slice(0, KEY_PREFIX_LENGTH) })
      .getMany();
    const now = Date.now();
    for (const candidate of candidates) {
      if (!apiKeyMatches(presented, candidate.key_salt, candidate.key_hash)) continue;
      if (candidate.revoked_at) return null;
      if (candidate.expires_at && candidate.expires_at.getTime() <= now) return null;
      return { key: candidate, tenant: (candidate as ApiKey & { tenant: Tenant }).tenant };
    }
    return null;
  }
}
