import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export const USER_ROLES = ['owner', 'admin', 'member'] as const;
export type UserRole = (typeof USER_ROLES)[number];

@Entity({ name: 'users' })
export class User {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  tenant_id: string;

  /** Stored lower-cased; unique across the service (a unique index on lower(email)). */
  @Column({ type: 'text' })
  email: string;

  /** argon2id PHC string; null for users who only sign in through SAML. */
  @Column({ type: 'text', nullable: true })
  password_hash: string | null;

  /** Optional display name; the address identifies the user. */
  @Column({ type: 'text', nullable: true })
  name: string | null;

  @Column({ type: 'text', default: 'member' })
  role: UserRole;

  @Column({ type: 'boolean', default: false })
  email_verified: boolean;

  @Column({ type: 'boolean', default: false })
  totp_enabled: boolean;

  /** S7: sealed with the master key (CryptoBox); set at setup, live once enabled. */
  @Column({ type: 'text', nullable: true })
  totp_secret: string | null;

  /** The last accepted TOTP time step: a code is accepted once (M1). bigint arrives as a string. */
  @Column({ type: 'bigint', nullable: true })
  totp_last_step: string | null;

  /** Set when too many wrong TOTP codes locked the second factor; a recovery code lifts it. */
  @Column({ type: 'timestamptz', nullable: true })
  totp_locked_at: Date | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}
