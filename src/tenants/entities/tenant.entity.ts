import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

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

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}
