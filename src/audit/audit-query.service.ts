import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AppError } from '../common/errors.js';
import { isUuid } from '../common/uuid.pipe.js';
import { AppConfig } from '../config/app-config.js';
import { actionLabel, concernsDocument } from './audit-actions.js';
import { decodeAuditCursor, encodeAuditCursor } from './audit-cursor.js';
import type {
  AuditActorDto,
  AuditDocumentDto,
  AuditEntryDto,
  AuditPageDto,
  AuditQueryDto,
} from './dto/audit-query.dto.js';

export const AUDIT_PAGE_DEFAULT = 50;
const KEY_PREFIX = /^sdf_k[A-Za-z0-9_-]{3}$/;

/** The stored actor a filter value means: a user id, an API key prefix, or the actor string itself. */
export function actorFilter(value: string): string {
  if (isUuid(value)) return `user:${value.toLowerCase()}`;
  if (KEY_PREFIX.test(value)) return `api_key:${value}`;
  if (value.includes(':')) return value;
  return `user:${value}`;
}

/** The actor strings the service writes, read as a kind and what identifies the actor within it. */
export type ParsedActor =
  | { kind: 'user'; userId: string }
  | { kind: 'api_key'; prefix: string }
  | { kind: 'operator' | 'system' | 'anonymous'; name: string };

const PLAIN: Record<string, { kind: 'system' | 'anonymous'; name: string }> = {
  saml: { kind: 'system', name: 'Single sign-on' },
  stripe: { kind: 'system', name: 'Billing' },
  anonymous: { kind: 'anonymous', name: 'Anonymous' },
};

export function parseActor(actor: string): ParsedActor {
  const colon = actor.indexOf(':');
  const head = colon < 0 ? actor : actor.slice(0, colon);
  const rest = colon < 0 ? '' : actor.slice(colon + 1);
  if (head === 'user' && rest) return { kind: 'user', userId: rest };
  if (head === 'api_key' && rest) return { kind: 'api_key', prefix: rest };
  if (head === 'admin') return { kind: 'operator', name: 'Service operator' };
  if (head === 'system') return { kind: 'system', name: 'System' };
  if (head === 'connector') return { kind: 'system', name: 'ERP connector' };
  const plain = PLAIN[actor];
  if (plain) return plain;
  // The actor column holds a user id for a user (SDF-SPEC): an entry written that way reads as one.
  if (isUuid(actor)) return { kind: 'user', userId: actor };
  return { kind: 'system', name: actor };
}

export const REMOVED_USER = 'Removed user';
export const UNNAMED_KEY = 'API key';

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
    const names = await this.names(tenantId, entries);
    return {
      entries: entries.map((r): AuditEntryDto => ({
        id: r.id,
        action: r.action,
        action_label: actionLabel(r.action),
        actor: r.actor,
        actor_display: names.actor(r),
        document: names.document(r),
        resource_id: r.resource_id,
        ip_address: r.ip_address,
        metadata: r.metadata,
        created_at: r.created_at.toISOString(),
      })),
      next_cursor: hasMore && last ? encodeAuditCursor(secret, { micros: last.micros, id: last.id }) : null,
      has_more: hasMore,
    };
  }

  /**
   * The people, keys and documents a page names, read in one statement per kind for the whole page, each
   * naming the tenant (and row-level security holding the connection to it besides): an id of another
   * organization's user, key or document finds nothing and reads as removed, never as its name.
   */
  private async names(tenantId: string, rows: Row[]) {
    const userIds = new Set<string>();
    const prefixes = new Set<string>();
    const documentIds = new Set<string>();
    const parsed = new Map<string, ParsedActor>();
    for (const r of rows) {
      const actor = parseActor(r.actor);
      parsed.set(r.id, actor);
      if (actor.kind === 'user' && isUuid(actor.userId)) userIds.add(actor.userId.toLowerCase());
      if (actor.kind === 'api_key') prefixes.add(actor.prefix);
      if (r.resource_id && concernsDocument(r.action) && isUuid(r.resource_id)) {
        documentIds.add(r.resource_id.toLowerCase());
      }
    }
    const [users, keys, documents] = await Promise.all([
      userIds.size
        ? (this.ds.query(
            `SELECT id::text AS id, name, email FROM users WHERE tenant_id = $1 AND id = ANY($2::uuid[])`,
            [tenantId, [...userIds]],
          ) as Promise<{ id: string; name: string | null; email: string }[]>)
        : [],
      prefixes.size
        ? (this.ds.query(
            `SELECT key_prefix, name, created_at FROM api_keys
              WHERE tenant_id = $1 AND key_prefix = ANY($2::text[]) ORDER BY created_at`,
            [tenantId, [...prefixes]],
          ) as Promise<{ key_prefix: string; name: string | null; created_at: Date }[]>)
        : [],
      documentIds.size
        ? (this.ds.query(
            `SELECT id::text AS id, summary->>'title' AS title FROM documents WHERE tenant_id = $1 AND id = ANY($2::uuid[])`,
            [tenantId, [...documentIds]],
          ) as Promise<{ id: string; title: string | null }[]>)
        : [],
    ]);
    const userById = new Map(users.map((u) => [u.id, u]));
    const titleById = new Map(documents.map((d) => [d.id, d.title]));
    return {
      actor: (r: Row): AuditActorDto => {
        const actor = parsed.get(r.id)!;
        if (actor.kind === 'user') {
          const user = userById.get(actor.userId.toLowerCase());
          return user
            ? { kind: 'user', name: user.name?.trim() || user.email, email: user.email, key_prefix: null }
            : { kind: 'user', name: REMOVED_USER, email: null, key_prefix: null };
        }
        if (actor.kind === 'api_key') {
          // Prefixes are short and may repeat: the key of that prefix made last before the entry.
          const same = keys.filter((k) => k.key_prefix === actor.prefix);
          const key = same.filter((k) => k.created_at <= r.created_at).pop() ?? same[0];
          return { kind: 'api_key', name: key?.name?.trim() || UNNAMED_KEY, email: null, key_prefix: actor.prefix };
        }
        return { kind: actor.kind, name: actor.name, email: null, key_prefix: null };
      },
      document: (r: Row): AuditDocumentDto | null => {
        if (!r.resource_id || !concernsDocument(r.action) || !isUuid(r.resource_id)) return null;
        const id = r.resource_id.toLowerCase();
        if (titleById.has(id)) return { id, title: titleById.get(id) ?? null, deleted: false };
        // The entry of the deletion keeps the title the document had; other entries of it know none.
        const kept = r.action === 'delete' ? r.metadata.title : undefined;
        return { id, title: typeof kept === 'string' ? kept : null, deleted: true };
      },
    };
  }
}
