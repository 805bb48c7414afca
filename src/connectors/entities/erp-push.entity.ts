import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

export const PUSH_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type PushStatus = (typeof PUSH_STATUSES)[number];

/** One document pushed to one connector; unique per (connector, document) so a push happens once. */
@Entity({ name: 'erp_pushes' })
export class ErpPush {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Index()
  @Column({ type: 'uuid' })
  tenant_id: string;

  @Column({ type: 'uuid' })
  connector_id: string;

  /** The document record's id (the one the API's paths take). */
  @Column({ type: 'uuid' })
  document_id: string;

  @Column({ type: 'text', default: 'queued' })
  status: PushStatus;

  @Column({ type: 'text', nullable: true })
  erp_document_id: string | null;

  /** The ERP's own message when the push failed. */
  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  updated_at: Date;
}
