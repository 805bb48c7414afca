import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { QueryFailedError, type DataSource, type EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import { ApiKeysService } from '../auth/api-keys.service.js';
import { ApiKey } from '../auth/entities/api-key.entity.js';
import { BillingService } from '../billing/billing.service.js';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import type { IdpMetadata } from '../saml/idp-metadata.js';
import { SamlMetadataService } from '../saml/saml-metadata.service.js';
import { Tenant } from '../tenants/entities/tenant.entity.js';
import { TenantsRepository } from '../tenants/tenants.repository.js';
import { PrivateTargets } from '../webhooks/ssrf.js';
import { ApiKeyDto, type CreateApiKeyDto, type CreatedApiKeyDto } from './dto/api-key.dto.js';
import { TenantDto, type CreateTenantDto, type UpdateTenantDto } from './dto/tenant.dto.js';
import { TenantLifecycle } from './tenant-lifecycle.js';

/** Who did it and from where: every admin change is audited with this (S11). */
export interface Actor {
  actor: string;
  ip: string | null;
}

function isUniqueViolation(err: unknown): boolean {
  return err instanceof QueryFailedError && (err.driverError as { code?: string }).code === '23505';
}

/** Tenant and API key administration; used by the admin API and the operator CLI alike. */
@Injectable()
export class AdminService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly tenants: TenantsRepository,
    private readonly apiKeys: ApiKeysService,
    private readonly audit: AuditService,
    private readonly lifecycle: TenantLifecycle,
    private readonly samlMetadata: SamlMetadataService,
    @Inject(AppConfig) private readonly config: AppConfig,
    @Optional() private readonly billing?: BillingService,
  ) {}

  async createTenant(input: CreateTenantDto, by: Actor): Promise<TenantDto> {
    try {
      return await this.ds.transaction(async (m) => {
        const tenant = await m.save(
          m.create(Tenant, {
            name: input.name,
            slug: input.slug,
            rate_limit_rpm: input.rate_limit_rpm ?? this.config.env.RATE_LIMIT_DEFAULT_RPM,
          }),
        );
        await this.lifecycle.tenantCreated(m, tenant);
        await this.record(m, tenant.id, 'tenant.create', tenant.id, by, { slug: tenant.slug, name: tenant.name });
        return TenantDto.from(tenant);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw AppError.conflict(`A tenant with slug '${input.slug}' already exists`);
      throw err;
    }
  }

  async getTenant(tenantId: string): Promise<TenantDto> {
    return TenantDto.from(await this.requireTenant(tenantId));
  }

  async updateTenant(tenantId: string, input: UpdateTenantDto, by: Actor): Promise<TenantDto> {
    const billing = this.billing;
    if ((input.plan !== undefined || input.limits !== undefined) && !billing) {
      throw AppError.badRequest('Plans exist on the managed deployment only', [
        { path: input.plan !== undefined ? '/plan' : '/limits', message: 'not available on a self-hosted deployment' },
      ]);
    }
    // M3: Enterprise's rate limit is the tenant's rate_limit_rpm (S12); limits.rpm sets it.
    if (input.limits?.rpm !== undefined) input.rate_limit_rpm = input.limits.rpm;
    // C1: a new metadata source is fetched and parsed before anything is stored (the fetch stays
    // outside the transaction); one that does not load is a 400 and changes nothing.
    const current = await this.requireTenant(tenantId);
    const url = input.saml_metadata_url !== undefined ? input.saml_metadata_url : current.saml_metadata_url;
    const xml = input.saml_metadata_xml !== undefined ? input.saml_metadata_xml : current.saml_metadata_xml;
    const enabling = (input.saml_enabled ?? current.saml_enabled) === true;
    const sourceChanged =
      (input.saml_metadata_url !== undefined && input.saml_metadata_url !== current.saml_metadata_url) ||
      (input.saml_metadata_xml !== undefined && input.saml_metadata_xml !== current.saml_metadata_xml);
    let parsed: IdpMetadata | null = null;
    if ((url || xml) && (sourceChanged || (enabling && current.saml_idp_certificates.length === 0))) {
      try {
        parsed = await this.samlMetadata.load({ url, xml });
      } catch (err) {
        const path = url ? '/saml_metadata_url' : '/saml_metadata_xml';
        throw AppError.badRequest(`SAML metadata not usable: ${(err as Error).message}`, [
          { path, message: (err as Error).message },
        ]);
      }
    }
    const dto = await this.ds.transaction(async (m) => {
      const tenant = await this.requireTenant(tenantId, m, true);
      if (billing && (input.plan !== undefined || input.limits !== undefined)) {
        await billing.setPlanByOperator(m, tenantId, input, { actor: by.actor, ip: by.ip, source: 'admin' });
      }
      const changed: Record<string, unknown> = {};
      for (const field of [
        'name',
        'rate_limit_rpm',
        'saml_enabled',
        'saml_metadata_url',
        'saml_entity_id',
        'saml_metadata_xml',
        'saml_idp_initiated',
        'saml_return_paths',
      ] as const) {
        if (input[field] !== undefined && JSON.stringify(input[field]) !== JSON.stringify(tenant[field])) {
          changed[field] = input[field];
          Object.assign(tenant, { [field]: input[field] });
        }
      }
      if (parsed) SamlMetadataService.apply(tenant, parsed);
      if (!tenant.saml_metadata_url && !tenant.saml_metadata_xml) {
        // Without a source the stored copy has nothing to be refreshed from; it goes too.
        Object.assign(tenant, { saml_idp_entity_id: null, saml_idp_sso_url: null, saml_idp_certificates: [] });
      }
      if (tenant.saml_enabled && (!(tenant.saml_metadata_url || tenant.saml_metadata_xml) || !tenant.saml_entity_id)) {
        throw AppError.badRequest(
          'SAML needs saml_metadata_url (or saml_metadata_xml) and saml_entity_id before it can be enabled',
          [
            {
              path: '/saml_enabled',
              message: 'saml_metadata_url or saml_metadata_xml, and saml_entity_id, are required',
            },
          ],
        );
      }
      if (Object.keys(changed).length > 0 || parsed) {
        await m.save(tenant);
        await this.record(m, tenant.id, 'tenant.update', tenant.id, by, {
          changed: Object.keys(changed),
        });
      }
      return TenantDto.from(tenant);
    });
    // After commit: every instance's limiter reads the new plan and limits at its next request.
    await billing?.publish(tenantId);
    return dto;
  }

  async createApiKey(tenantId: string, input: CreateApiKeyDto, by: Actor): Promise<CreatedApiKeyDto> {
    const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw AppError.badRequest('expires_at must be in the future', [{ path: '/expires_at', message: 'in the past' }]);
    }
    return this.ds.transaction(async (m) => {
      await this.requireTenant(tenantId, m);
      const { record, key } = await this.apiKeys.create(m, tenantId, { name: input.name, expiresAt });
      await this.record(m, tenantId, 'api_key.create', record.id, by, {
        key_prefix: record.key_prefix,
        name: record.name,
      });
      return {
        id: record.id,
        key,
        key_prefix: record.key_prefix,
        name: record.name,
        expires_at: record.expires_at?.toISOString() ?? null,
        created_at: record.created_at.toISOString(),
      };
    });
  }

  async listApiKeys(tenantId: string): Promise<ApiKeyDto[]> {
    await this.requireTenant(tenantId);
    const now = Date.now();
    return (await this.apiKeys.listForTenant(tenantId)).map((k) => ApiKeyDto.from(k, now));
  }

  /**
   * Revocation is immediate: the guard reads `revoked_at` on every request. Revoking twice is a no-op.
   * With `tenantId` (the portal), another tenant's key is 404 like a missing one (S5).
   */
  async revokeApiKey(keyId: string, by: Actor, tenantId?: string): Promise<void> {
    await this.ds.transaction(async (m) => {
      const where = tenantId ? { id: keyId, tenant_id: tenantId } : { id: keyId };
      const key = await m.findOne(ApiKey, { where, lock: { mode: 'pessimistic_write' } });
      if (!key) throw AppError.notFound('API key');
      if (key.revoked_at) return;
      key.revoked_at = new Date();
      await m.save(key);
      await this.record(m, key.tenant_id, 'api_key.revoke', key.id, by, { key_prefix: key.key_prefix });
    });
  }

  /**
   * The operator's exception to the connectors' address guard for one tenant (managed deployment): the
   * whole list, replacing the stored one. Audited with the list before and after.
   */
  async setConnectorPrivateTargets(tenantId: string, targets: string[], by: Actor): Promise<TenantDto> {
    if (!this.config.isManaged) {
      throw AppError.badRequest('Connector private targets exist on the managed deployment only', [
        { path: '/targets', message: 'a self-hosted deployment does not guard connector addresses' },
      ]);
    }
    const problems = PrivateTargets.problems(targets);
    if (problems.length) {
      throw AppError.badRequest(
        'Invalid connector private targets',
        problems.map((p) => ({ path: `/targets/${p.index}`, message: p.message })),
      );
    }
    const list = [...new Set(targets.map((t) => t.toLowerCase()))];
    return this.ds.transaction(async (m) => {
      const tenant = await this.requireTenant(tenantId, m, true);
      const before = tenant.connector_private_targets;
      tenant.connector_private_targets = list;
      await m.save(tenant);
      await this.record(m, tenantId, 'tenant.connector_private_targets', tenantId, by, { before, after: list });
      return TenantDto.from(tenant);
    });
  }

  private async requireTenant(id: string, m: EntityManager = this.ds.manager, lock = false): Promise<Tenant> {
    const tenant = lock
      ? await m.findOne(Tenant, { where: { id }, lock: { mode: 'pessimistic_write' } })
      : await this.tenants.findById(id, m);
    if (!tenant) throw AppError.notFound('Tenant');
    return tenant;
  }

  private record(
    m: EntityManager,
    tenantId: string,
    action: string,
    resourceId: string,
    by: Actor,
    metadata: Record<string, unknown>,
  ): Promise<void> {
    return this.audit.record(m, { tenantId, action, resourceId, actor: by.actor, ipAddress: by.ip, metadata });
  }
}
