import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * S11: append-only; the database rejects UPDATE, DELETE and TRUNCATE on this table and on each of its
 * monthly partitions (by created_at, which is therefore part of the primary key; see docs/audit.md).
 */
@Entity({ name: 'audit_log' })
export class AuditLogEntry {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid', nullable: true })
  tenant_id: string | null;

  @Column({ type: 'text' })
  action: string;

  @Column({ type: 'text', nullable: true })
  resource_id: string | null;

  @Column({ type: 'text' })
  actor: string;

  @Column({ type: 'text', nullable: true })
  ip_address: string | null;

  @Column({ type: 'jsonb', default: {} })
  metadata: Record<string, unknown>;

  @CreateDateColumn({ type: 'timestamptz', primary: true })
  created_at: Date;
}
