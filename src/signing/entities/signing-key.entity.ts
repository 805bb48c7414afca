import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { SignatureAlgorithm } from '../../sdf/index.js';

/** SDF-SPEC "Signing key"; S7: the private key exists here only sealed under the master key. */
@Entity({ name: 'signing_keys' })
export class SigningKey {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Index()
  @Column({ type: 'uuid' })
  tenant_id: string;

  @Column({ type: 'text' })
  algorithm: SignatureAlgorithm;

  /** SPKI PEM, public. */
  @Column({ type: 'text' })
  public_key: string;

  /** PKCS#8 PEM sealed by CryptoBox, bound to tenant and key id (see `privateKeyAssociatedData`). */
  @Column({ type: 'text' })
  private_key_enc: string;

  @Column({ type: 'boolean', default: true })
  is_active: boolean;

  /** RFC 7638 thumbprint of the public key: the JWS `kid` (F9); never changes, unique across tenants. */
  @Column({ type: 'text', unique: true })
  key_id: string;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;
}

/** The columns the signing job reads of the active key: the private half still sealed. */
export type SealedSigningKey = Pick<SigningKey, 'tenant_id' | 'key_id' | 'algorithm' | 'private_key_enc'>;
