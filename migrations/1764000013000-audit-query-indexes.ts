import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * M4: GET /v1/audit filters by action or actor within a tenant, newest first. Each filter gets an
 * index in the page order, so a page costs the same at a thousand rows or a billion; the time range
 * uses the existing (tenant_id, created_at DESC, id DESC) index. Built CONCURRENTLY (outside a
 * transaction) so writers of a large audit log are not blocked while it builds.
 */
export class AuditQueryIndexes1764000013000 implements MigrationInterface {
  name = 'AuditQueryIndexes1764000013000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS audit_log_tenant_action_created_idx
         ON audit_log (tenant_id, action, created_at DESC, id DESC)`,
    );
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS audit_log_tenant_actor_created_idx
         ON audit_log (tenant_id, actor, created_at DESC, id DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS audit_log_tenant_actor_created_idx`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS audit_log_tenant_action_created_idx`);
  }
}
