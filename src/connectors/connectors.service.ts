import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import type { TenantAuth } from '../auth/auth-context.js';
import { CryptoBox } from '../common/crypto-box.js';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { credentialFields, parseCredentials, sealCredentials, type Credentials } from './credentials.js';
import {
  ConnectorDto,
  type ConfigureConnectorDto,
  type ConnectorHealthDto,
  type UpdateConnectorDto,
} from './dto/connector.dto.js';
import { Connector } from './entities/connector.entity.js';
import { ErpGateway } from './erp-gateway.js';

/** Who acts and from where (S11). */
export interface ConnectorActor {
  auth: TenantAuth;
  ip: string | null;
}

/**
 * "Admin/owner roles where users exist": a user token carrying the role `member` may use connectors
 * but not change them. API keys and tenant tokens without a role (integrations, self-hosted) may.
 */
export function assertMayManage(auth: TenantAuth): void {
  if (auth.kind === 'tenant_jwt' && auth.role === 'member') {
    throw AppError.forbidden('Only owners and admins may change connectors');
  }
}

/** Connector configuration (SDF-SPEC Connector configuration, C2); every query scoped by tenant. */
@Injectable()
export class ConnectorsService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly config: AppConfig,
    private readonly box: CryptoBox,
    private readonly audit: AuditService,
    private readonly gateway: ErpGateway,
  ) {}

  async configure(by: ConnectorActor, input: ConfigureConnectorDto): Promise<ConnectorDto> {
    assertMayManage(by.auth);
    const credentials = parseCredentials(input.auth_type, input.credentials);
    const baseUrl = await this.gateway.checkUrl(input.base_url, '/base_url', by.auth.tenantId);
    await this.checkCredentialUrls(credentials, by.auth.tenantId);
    const id = randomUUID();
    return this.ds.transaction(async (m) => {
      const saved = await m.save(
        m.create(Connector, {
          id,
          tenant_id: by.auth.tenantId,
          erp_type: input.erp_type,
          name: input.name ?? null,
          base_url: baseUrl,
          auth_type: input.auth_type,
          credentials_enc: sealCredentials(this.box, id, credentials),
          is_active: input.is_active ?? true,
          health_status: 'unknown',
        }),
      );
      await this.record(m, by, 'connector.configure', saved, {
        erp_type: saved.erp_type,
        base_url: saved.base_url,
        auth_type: saved.auth_type,
        credentials_set: credentialFields(credentials),
      });
      return ConnectorDto.from(saved, credentials);
    });
  }

  async list(tenantId: string): Promise<ConnectorDto[]> {
    const rows = await this.ds.manager.find(Connector, {
      where: { tenant_id: tenantId },
      order: { created_at: 'ASC', id: 'ASC' },
    });
    return rows.map((c) => ConnectorDto.from(c, this.gateway.credentialsOf(c)));
  }

  /** S5: another tenant's connector is 404, exactly like a missing one. */
  async get(tenantId: string, id: string, m: EntityManager = this.ds.manager): Promise<Connector> {
    const c = await m.findOne(Connector, { where: { id, tenant_id: tenantId } });
    if (!c) throw AppError.notFound('Connector');
    return c;
  }

  /** The named connector, or the tenant's first active one; it must be active to be used. */
  async usable(tenantId: string, id?: string): Promise<Connector> {
    const c = id
      ? await this.get(tenantId, id)
      : await this.ds.manager.findOne(Connector, {
          where: { tenant_id: tenantId, is_active: true },
          order: { created_at: 'ASC', id: 'ASC' },
        });
    if (!c) throw AppError.notFound('Connector');
    if (!c.is_active) throw AppError.invalidState('Connector is not active');
    return c;
  }

  /**
   * Credential fields given replace the stored ones and the others are kept; a new auth_type needs
   * its complete set. Audited as a configure, in the same transaction.
   */
  async update(by: ConnectorActor, id: string, input: UpdateConnectorDto): Promise<ConnectorDto> {
    assertMayManage(by.auth);
    const baseUrl =
      input.base_url === undefined
        ? undefined
        : await this.gateway.checkUrl(input.base_url, '/base_url', by.auth.tenantId);
    return this.ds.transaction(async (m) => {
      const c = await m.findOne(Connector, {
        where: { id, tenant_id: by.auth.tenantId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!c) throw AppError.notFound('Connector');
      const authType = input.auth_type ?? c.auth_type;
      let credentials = this.gateway.credentialsOf(c);
      if (input.credentials !== undefined || authType !== c.auth_type) {
        const { auth_type: _old, ...kept } = credentials;
        const merged = authType === c.auth_type ? { ...kept, ...input.credentials } : { ...input.credentials };
        credentials = parseCredentials(authType, merged);
        await this.checkCredentialUrls(credentials, by.auth.tenantId);
      }
      const changed = Object.keys(input).filter((k) => (input as Record<string, unknown>)[k] !== undefined);
      c.name = input.name ?? c.name;
      c.base_url = baseUrl ?? c.base_url;
      c.auth_type = authType;
      c.is_active = input.is_active ?? c.is_active;
      c.credentials_enc = sealCredentials(this.box, c.id, credentials);
      if (baseUrl !== undefined || input.credentials !== undefined || input.auth_type !== undefined) {
        // What was known about the old address or credentials says nothing about the new ones.
        c.health_status = 'unknown';
        c.health_reason = null;
        c.last_health_check = null;
      }
      c.updated_at = new Date();
      const saved = await m.save(c);
      await this.record(m, by, 'connector.configure', saved, {
        changed: changed.sort(),
        credentials_changed: input.credentials ? Object.keys(input.credentials).sort() : [],
      });
      return ConnectorDto.from(saved, credentials);
    });
  }

  async remove(by: ConnectorActor, id: string): Promise<void> {
    assertMayManage(by.auth);
    await this.ds.transaction(async (m) => {
      const c = await m.findOne(Connector, {
        where: { id, tenant_id: by.auth.tenantId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!c) throw AppError.notFound('Connector');
      await m.delete(Connector, { id: c.id, tenant_id: c.tenant_id });
      await this.record(m, by, 'connector.delete', c, { erp_type: c.erp_type, base_url: c.base_url });
    });
  }

  /** Every active connector of the tenant; a result younger than the cache time is reused as it is. */
  async health(tenantId: string): Promise<ConnectorHealthDto[]> {
    const rows = await this.ds.manager.find(Connector, {
      where: { tenant_id: tenantId, is_active: true },
      order: { created_at: 'ASC', id: 'ASC' },
    });
    return Promise.all(
      rows.map(async (c) => {
        if (!this.isFresh(c)) {
          const result = await this.gateway.checkHealth(c);
          c.health_status = result.status;
          c.health_reason = result.reason;
          c.last_health_check = result.checkedAt;
        }
        return {
          id: c.id,
          name: c.name,
          erp_type: c.erp_type,
          health_status: c.health_status,
          reason: c.health_reason,
          last_health_check: c.last_health_check?.toISOString() ?? null,
        };
      }),
    );
  }

  isFresh(c: Connector): boolean {
    const maxAge = this.config.env.ERP_HEALTH_CACHE_SECONDS * 1000;
    return c.last_health_check !== null && Date.now() - c.last_health_check.getTime() < maxAge;
  }

  private async checkCredentialUrls(credentials: Credentials, tenantId: string): Promise<void> {
    if (credentials.auth_type === 'oauth2') {
      await this.gateway.checkUrl(credentials.token_url, '/credentials/token_url', tenantId);
    }
  }

  private record(
    m: EntityManager,
    by: ConnectorActor,
    action: string,
    c: Connector,
    metadata: Record<string, unknown>,
  ): Promise<void> {
    return this.audit.record(m, {
      tenantId: c.tenant_id,
      action,
      resourceId: c.id,
      actor: by.auth.actor,
      ipAddress: by.ip,
      metadata,
    });
  }
}
