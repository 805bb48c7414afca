import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** TOTP recovery codes: shown once at enable, stored as SHA-256, each usable once. */
@Entity({ name: 'totp_recovery_codes' })
export class RecoveryCode {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  tenant_id: string;

  @Column({ type: 'uuid' })
  user_id: string;

  @Column({ type: 'text' })
  code_hash: string;

  @Column({ type: 'timestamptz', nullable: true })
  used_at: Date | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;
}
