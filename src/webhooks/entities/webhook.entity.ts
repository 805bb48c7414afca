import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import type { EventName } from '../../events/events.js';

/** SDF-SPEC Webhook registration, with S7's encrypted secret beside its hash. */
@Entity({ name: 'webhooks' })
export class Webhook {
  /** Chosen by the service before insert: the id is the associated data of the secret's encryption. */
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Index()
  @Column({ type: 'uuid' })
  tenant_id: string;

  @Column({ type: 'text' })
  url: string;

  @Column({ type: 'text' })
  secret_enc: string;

  /** S7: `v<master key id>.<hex HMAC>` (see SECRET_HASH_PURPOSE); null only until the service recomputes it at start. */
  @Column({ type: 'text', nullable: true })
  secret_hash: string | null;

  @Column({ type: 'text', array: true })
  events: EventName[];

  @Column({ type: 'boolean', default: true })
  is_active: boolean;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;
}
