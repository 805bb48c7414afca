import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** SDF-SPEC Session: one refresh token; a refresh revokes it and creates the next one. */
@Entity({ name: 'sessions' })
export class Session {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  tenant_id: string;

  @Column({ type: 'uuid' })
  user_id: string;

  /** Hex SHA-256 of the 256-bit random token; the raw token exists only on the client. */
  @Column({ type: 'text' })
  refresh_token_hash: string;

  /** Absolute: carried over unchanged by every rotation. */
  @Column({ type: 'timestamptz' })
  expires_at: Date;

  @Column({ type: 'timestamptz', nullable: true })
  revoked_at: Date | null;

  @Column({ type: 'text', nullable: true })
  ip_address: string | null;

  @Column({ type: 'text', nullable: true })
  user_agent: string | null;

  /** Its last sign-in or renewal: each rotation is a new row. */
  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  /** The sign-in the chain of rotations began with: carried over unchanged, like expires_at. */
  @Column({ type: 'timestamptz', default: () => 'now()' })
  signed_in_at: Date;
}
