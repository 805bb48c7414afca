import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

@Entity({ name: 'api_keys' })
export class ApiKey {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Index()
  @Column({ type: 'uuid' })
  tenant_id: string;

  /** S6: the first 8 characters of the key, for lookup and display. */
  @Index()
  @Column({ type: 'varchar', length: 8 })
  key_prefix: string;

  @Column({ type: 'text' })
  key_salt: string;

  /** S6: hex SHA-256(salt || key); the raw key is never stored. */
  @Column({ type: 'text' })
  key_hash: string;

  @Column({ type: 'text', nullable: true })
  name: string | null;

  @Column({ type: 'timestamptz', nullable: true })
  expires_at: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  revoked_at: Date | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;
}
