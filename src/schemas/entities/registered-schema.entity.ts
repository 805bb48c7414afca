import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { SummaryMapping } from '../../sdf/summary.js';

/** S14: one published revision of a tenant's schema. */
@Entity({ name: 'schemas' })
@Index(['tenant_id', 'schema_id', 'version'], { unique: true })
export class RegisteredSchema {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  tenant_id: string;

  /** `<type>/v<major>[.<minor>...]`, e.g. `invoice/v1`. */
  @Column({ type: 'text' })
  schema_id: string;

  @Column({ type: 'text' })
  version: string;

  @Column({ type: 'jsonb' })
  schema: Record<string, unknown>;

  /** Lowercase hex SHA-256 of the RFC 8785 canonical JSON of `schema` (compared with an archive's schema.json). */
  @Column({ type: 'char', length: 64 })
  content_hash: string;

  /** Where documents made against this schema keep their summary's fields (JSON pointers); null: none registered. */
  @Column({ type: 'jsonb', nullable: true })
  summary_mapping: SummaryMapping | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;
}
