import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

export const ERP_TYPES = ['SAP', 'ORACLE'] as const;
export type ErpType = (typeof ERP_TYPES)[number];
export const AUTH_TYPES = ['basic', 'oauth2', 'bearer'] as const;
export type AuthType = (typeof AUTH_TYPES)[number];
export const HEALTH_STATUSES = ['healthy', 'unhealthy', 'unknown'] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

/** SDF-SPEC Connector configuration (C2: erp_type SAP or ORACLE). */
@Entity({ name: 'connectors' })
export class Connector {
  /** Chosen before insert: the id is the associated data of the credentials' encryption. */
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Index()
  @Column({ type: 'uuid' })
  tenant_id: string;

  @Column({ type: 'text' })
  erp_type: ErpType;

  @Column({ type: 'text', nullable: true })
  name: string | null;

  @Column({ type: 'text' })
  base_url: string;

  @Column({ type: 'text' })
  auth_type: AuthType;

  /** S7: AES-256-GCM under the master key; never leaves the server. */
  @Column({ type: 'text' })
  credentials_enc: string;

  @Column({ type: 'boolean', default: true })
  is_active: boolean;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  last_health_check: Date | null;

  @Column({ type: 'text', default: 'unknown' })
  health_status: HealthStatus;

  @Column({ type: 'text', nullable: true })
  health_reason: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  updated_at: Date;
}
