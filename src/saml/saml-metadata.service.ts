import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { Tenant } from '../tenants/entities/tenant.entity.js';
import type { WebhookResolver } from '../webhooks/ssrf.js';
import { parseIdpMetadata, type IdpMetadata } from './idp-metadata.js';
import { fetchMetadata } from './metadata-fetch.js';

/** The name resolution of metadata fetches: the webhook resolver, under a token of its own. */
export const SAML_RESOLVER = Symbol('SAML_RESOLVER');

export interface MetadataStatus {
  refreshed: boolean;
  error: string | null;
  refreshed_at: string | null;
  sso_url: string | null;
  certificates: number;
}

/**
 * C1: the identity provider's metadata, fetched (through the webhook address guard where webhooks
 * have it) or given inline, parsed, and stored with the tenant. A refresh that fails keeps the last
 * good copy and records the error; only configuration refuses a source that does not load.
 */
@Injectable()
export class SamlMetadataService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('SamlMetadata');
  private timer: NodeJS.Timeout | null = null;

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(AppConfig) private readonly config: AppConfig,
    @Inject(SAML_RESOLVER) private readonly resolver: WebhookResolver,
  ) {}

  /** S10 as for webhook targets: unset WEBHOOK_ALLOW_PRIVATE_TARGETS guards in managed mode only. */
  get guarded(): boolean {
    return !(this.config.env.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? !this.config.isManaged);
  }

  /** Loads and parses a source; rejects with a sentence for the operator. */
  async load(source: { url: string | null; xml: string | null }): Promise<IdpMetadata> {
    let xml = source.xml;
    if (source.url) {
      try {
        xml = await fetchMetadata(source.url, {
          guard: this.guarded,
          resolver: this.resolver,
          timeoutMs: this.config.env.SAML_METADATA_TIMEOUT_MS,
        });
      } catch (err) {
        throw new Error(`metadata could not be fetched: ${(err as Error).message}`);
      }
    }
    if (!xml) throw new Error('neither saml_metadata_url nor saml_metadata_xml is set');
    return parseIdpMetadata(xml);
  }

  /** Copies parsed metadata onto the tenant (not saved). */
  static apply(tenant: Tenant, md: IdpMetadata): void {
    tenant.saml_idp_entity_id = md.entityId || null;
    tenant.saml_idp_sso_url = md.ssoUrl;
    tenant.saml_idp_certificates = md.certificates;
    tenant.saml_metadata_refreshed_at = new Date();
    tenant.saml_metadata_error = null;
  }

  /** Refreshes one tenant; a failure is recorded and the last good copy stays. */
  async refresh(tenantId: string): Promise<MetadataStatus | null> {
    const tenant = await this.ds.getRepository(Tenant).findOne({ where: { id: tenantId } });
    if (!tenant) return null;
    let error: string | null = null;
    try {
      const md = await this.load({ url: tenant.saml_metadata_url, xml: tenant.saml_metadata_xml });
      await this.ds.getRepository(Tenant).update(
        { id: tenant.id },
        {
          saml_idp_entity_id: md.entityId || null,
          saml_idp_sso_url: md.ssoUrl,
          saml_idp_certificates: md.certificates,
          saml_metadata_refreshed_at: new Date(),
          saml_metadata_error: null,
        },
      );
    } catch (err) {
      error = (err as Error).message.slice(0, 500);
      await this.ds.getRepository(Tenant).update({ id: tenant.id }, { saml_metadata_error: error });
    }
    const after = (await this.ds.getRepository(Tenant).findOne({ where: { id: tenantId } }))!;
    return {
      refreshed: error === null,
      error,
      refreshed_at: after.saml_metadata_refreshed_at?.toISOString() ?? null,
      sso_url: after.saml_idp_sso_url,
      certificates: after.saml_idp_certificates.length,
    };
  }

  /** The scheduled pass: every enabled tenant with a metadata URL, one after another. */
  async refreshAll(): Promise<void> {
    const rows = await this.ds
      .getRepository(Tenant)
      .createQueryBuilder('t')
      .select('t.id', 'id')
      .where('t.saml_enabled AND t.saml_metadata_url IS NOT NULL')
      .getRawMany<{ id: string }>();
    for (const { id } of rows) {
      const status = await this.refresh(id).catch((err: Error) => ({ error: err.message }));
      if (status?.error) this.logger.warn(`SAML metadata refresh failed for tenant ${id}: ${status.error}`);
    }
  }

  onApplicationBootstrap(): void {
    const minutes = this.config.env.SAML_METADATA_REFRESH_MINUTES;
    if (minutes === 0 || !this.config.runsApi) return;
    this.timer = setInterval(() => void this.refreshAll(), minutes * 60_000);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
