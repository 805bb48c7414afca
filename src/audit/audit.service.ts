import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditLogEntry } from './entities/audit-log.entity.js';

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
 * together with the change they record.
 */
@Injectable()
export class AuditService {
  async record(manager: EntityManager, entry: AuditRecord): Promise<void> {
    const row = manager.create(AuditLogEntry, {
      tenant_id: entry.tenantId,
      action: entry.action,
      actor: entry.actor,
      resource_id: entry.resourceId ?? null,
      ip_address: entry.ipAddress ?? null,
      metadata: entry.metadata ?? {},
    });
    await manager.save(row);
  }
}
