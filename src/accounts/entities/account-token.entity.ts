import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type AccountTokenKind = 'email_verification' | 'invitation' | 'password_reset';

/** Single-use tokens sent by mail (email verification, invitations); only their SHA-256 is stored. */
@Entity({ name: 'account_tokens' })
export class AccountToken {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  tenant_id: string;

  @Column({ type: 'text' })
  kind: AccountTokenKind;

  @Column({ type: 'text' })
  token_hash: string;

  @Column({ type: 'uuid', nullable: true })
  user_id: string | null;

  @Column({ type: 'text' })
  email: string;

  /** Invitations: the role the new member gets. */
  @Column({ type: 'text', nullable: true })
  role: 'admin' | 'member' | null;

  @Column({ type: 'text', nullable: true })
  created_by: string | null;

  @Column({ type: 'timestamptz' })
  expires_at: Date;

  @Column({ type: 'timestamptz', nullable: true })
  used_at: Date | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;
}
