import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

export interface AuditRecord {
  tenantId: string | null;
  action: string;
  actor: string;
  resourceId?: string | null;
  ipAddress?: string | null;
  metadata?: Record<string, unknown>;
}

/**
 * S11: audit entries are written through the caller's EntityManager so they commit or roll back
 * together with the change they record. One INSERT, nothing read back: it is on every state change's
 * path (an entity `save` would first SELECT the row it is about to create).
 */
@Injectable()
export class AuditService {
  async record(manager: EntityManager, entry: AuditRecord): Promise<void> {
    await manager.query(
      `INSERT INTO audit_log (tenant_id, action, resource_id, actor, ip_address, metadata) VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        entry.tenantId,
        entry.action,
        entry.resourceId ?? null,
        entry.actor,
        entry.ipAddress ?? null,
        JSON.stringify(entry.metadata ?? {}),
      ],
    );
  }
}
