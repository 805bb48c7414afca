import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { EventName, EventPayload } from '../events.js';

@Entity({ name: 'outbox_events' })
export class OutboxEvent {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Index()
  @Column({ type: 'uuid' })
  tenant_id: string;

  @Column({ type: 'text' })
  event: EventName;

  @Column({ type: 'jsonb' })
  payload: EventPayload;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @Column({ type: 'timestamptz', nullable: true })
  dispatched_at: Date | null;

  /** The event's number on the event stream, given once its transaction committed (null until then). */
  @Column({ type: 'bigint', nullable: true })
  seq: string | null;
}
