import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn, type DataSource } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';

@Entity({ name: 'tenants' })
export class Tenant {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', unique: true })
  slug: string;

  @Column({ type: 'integer', default: 60 })
  rate_limit_rpm: number;

  @Column({ type: 'boolean', default: false })
  saml_enabled: boolean;

  @Column({ type: 'text', nullable: true })
  saml_metadata_url: string | null;

  @Column({ type: 'text', nullable: true })
  saml_entity_id: string | null;

  /** C1: IdP metadata given inline, for an IdP without a metadata URL. */
  @Column({ type: 'text', nullable: true })
  saml_metadata_xml: string | null;

  /** IdP-initiated login (a response with no InResponseTo) is refused unless this is on. */
  @Column({ type: 'boolean', default: false })
  saml_idp_initiated: boolean;

  /** The return paths a RelayState may name (exactly, or as a prefix ending in "/"). */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  saml_return_paths: string[];

  /**
   * Managed deployment: the non-public networks (CIDR) and host names this tenant's connectors may reach
   * (a private ERP, over a VPN). Set by the operator alone; empty refuses every non-public address.
   */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  connector_private_targets: string[];

  /** From the last good metadata: kept when a later refresh fails. */
  @Column({ type: 'text', nullable: true })
  saml_idp_entity_id: string | null;

  @Column({ type: 'text', nullable: true })
  saml_idp_sso_url: string | null;

  /** Every signing certificate of the IdP (base64 DER); several during a rollover. */
  @Column({ type: 'jsonb', default: () => "'[]'" })
  saml_idp_certificates: string[];

  @Column({ type: 'timestamptz', nullable: true })
  saml_metadata_refreshed_at: Date | null;

  /** The last refresh's failure, cleared by the next success. */
  @Column({ type: 'text', nullable: true })
  saml_metadata_error: string | null;

  /** M3: the managed deployment's plan (free until billing changes it). */
  @Column({ type: 'text', default: 'free' })
  plan: string;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}

/**
 * The tenant as the authentication step loads it for every request: every column but the IdP's metadata
 * document and certificates, which only SAML sign-in and its configuration read (tens of kilobytes for
 * some identity providers, on every request otherwise).
 */
export const AUTH_TENANT_OMITS = ['saml_metadata_xml', 'saml_idp_certificates'] as const;
export type AuthTenant = Omit<Tenant, (typeof AUTH_TENANT_OMITS)[number]>;

/** The columns of AuthTenant, from the entity's metadata. */
export function authTenantColumns(ds: DataSource): ColumnMetadata[] {
  const omitted = new Set<string>(AUTH_TENANT_OMITS);
  return ds.getMetadata(Tenant).columns.filter((c) => !omitted.has(c.propertyName));
}
