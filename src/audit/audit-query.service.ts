import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AppError } from '../common/errors.js';
import { isUuid } from '../common/uuid.pipe.js';
import { AppConfig } from '../config/app-config.js';
import { decodeAuditCursor, encodeAuditCursor } from './audit-cursor.js';
import type { AuditEntryDto, AuditPageDto, AuditQueryDto } from './dto/audit-query.dto.js';

export const AUDIT_PAGE_DEFAULT = 50;
const KEY_PREFIX = /^sdf_k[A-Za-z0-9_-]{3}$/;

/** The stored actor a filter value means: a user id, an API key prefix, or the actor string itself. */
export function actorFilter(value: string): string {
  if (isUuid(value)) return `user:${value.toLowerCase()}`;
  if (KEY_PREFIX.test(value)) return `api_key:${value}`;
  if (value.includes(':')) return value;
  return `user:${value}`;
}

interface Row {
  id: string;
  action: string;
  actor: string;
  resource_id: string | null;
  ip_address: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  micros: string;
}

/**
 * M4: one tenant's audit log, newest first, keyset-paged on (created_at, id). Every filter combination
 * is served from an index in page order (see the audit query index migration), so a page's cost does
 * not grow with the log.
 */
@Injectable()
export class AuditQueryService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(AppConfig) private readonly config: AppConfig,
  ) {}

  async page(tenantId: string, q: AuditQueryDto): Promise<AuditPageDto> {
    const limit = q.limit ?? AUDIT_PAGE_DEFAULT;
    const secret = this.config.secrets.jwtSecret;
    const params: unknown[] = [tenantId];
    const where = ['tenant_id = $1'];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (q.action) add('action = ?', q.action);
    if (q.actor) add('actor = ?', actorFilter(q.actor));
    const from = q.from ? new Date(q.from) : null;
    const to = q.to ? new Date(q.to) : null;
    if (from && to && from.getTime() > to.getTime()) {
      throw AppError.badRequest('from is after to', [{ path: '/from', message: 'must not be after to' }]);
    }
    if (from) add('created_at >= ?', from);
    if (to) add('created_at < ?', to);
    if (q.cursor) {
      const at = decodeAuditCursor(secret, q.cursor);
      params.push(at.micros, at.id);
      const n = params.length;
      // Whole microseconds from the epoch: exact, unlike a float through to_timestamp().
      where.push(
        `(created_at, id) < (timestamptz 'epoch' + $${n - 1}::bigint * interval '1 microsecond', $${n}::uuid)`,
      );
    }
    params.push(limit + 1);
    const rows = (await this.ds.query(
      `SELECT id, action, actor, resource_id, ip_address, metadata, created_at,
              ((extract(epoch FROM created_at) * 1000000)::numeric)::bigint::text AS micros
         FROM audit_log
        WHERE ${where.join(' AND ')}
        ORDER BY created_at DESC, id DESC
        LIMIT $${params.length}`,
      params,
    )) as Row[];
    const hasMore = rows.length > limit;
    const entries = rows.slice(0, limit);
    const last = entries[entries.length - 1];
    return {
      entries: entries.map((r): AuditEntryDto => ({
        id: r.id,
        action: r.action,
        actor: r.actor,
        resource_id: r.resource_id,
        ip_address: r.ip_address,
        metadata: r.metadata,
        created_at: r.created_at.toISOString(),
      })),
      next_cursor: hasMore && last ? encodeAuditCursor(secret, { micros: last.micros, id: last.id }) : null,
      has_more: hasMore,
    };
  }
}
