import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The role a search finds its page's document ids as (docs/operations.md, Row-level security). */
export const SEARCH_ROLE = 'sdf_search';

/**
 * The columns a search's id query reads: the keys of the page, the filters and the searchable summary
 * columns. Nothing else of a document (its meta, file, validation or summary as returned) is readable as
 * the search role. A new search filter on another column needs it granted here by a later migration.
 */
export const SEARCH_COLUMNS = [
  'id',
  'tenant_id',
  'created_at',
  'status',
  'document_type',
  'summary_number',
  'summary_counterparty',
  'summary_amount',
  'summary_currency',
  'summary_issue_date',
  'summary_due_date',
  'summary_references',
  'summary_text',
  'summary_search',
] as const;

/**
 * Row-level security hides the search indexes from the application role: PostgreSQL applies a policy's
 * condition before any condition of the query that is not leak-proof (LIKE, strpos, full-text and array
 * matches, lower(), numeric comparisons), so none of those can be an index condition, whatever the
 * tenant setting holds; a search of a million documents read them all. Marking them leak-proof needs a
 * superuser.
 *
 * The role `sdf_search` may read the search columns above of `documents`, of every tenant (its own
 * policy admits every row, so the planner is free to use the indexes), and nothing else, never to
 * write. The service switches to it inside a search's transaction for the id query alone, which names
 * the request's tenant itself, and back before it reads the rows; the rows are read as the application
 * role by id, under the tenant policy. The application role is no member of it, so its own statements
 * stay under the tenant policy alone; the migrating user (the owner, whom the service's connections log in
 * as) is, to be allowed the switch, and so sees every document as it already does with no tenant named.
 */
export class DocumentSearchRole1796210000000 implements MigrationInterface {
  name = 'DocumentSearchRole1796210000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ schema }] = (await q.query(`SELECT quote_ident(current_schema()) AS schema`)) as [{ schema: string }];
    await q.query(`
      DO $$
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${SEARCH_ROLE}') THEN
          BEGIN
            CREATE ROLE ${SEARCH_ROLE} NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
          EXCEPTION WHEN duplicate_object THEN NULL; -- made meanwhile by a migration of another database
          END;
        END IF;
        -- The service's connections log in as the migrating user: it may switch to the role (a superuser always can).
        IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
          EXECUTE format('GRANT ${SEARCH_ROLE} TO %I', current_user);
        END IF;
      END $$`);
    await q.query(`GRANT USAGE ON SCHEMA ${schema} TO ${SEARCH_ROLE}`);
    await q.query(`GRANT SELECT (${SEARCH_COLUMNS.join(', ')}) ON documents TO ${SEARCH_ROLE}`);
    await q.query(`CREATE POLICY search_ids ON documents FOR SELECT TO ${SEARCH_ROLE} USING (true)`);
  }

  async down(q: QueryRunner): Promise<void> {
    const [{ schema }] = (await q.query(`SELECT quote_ident(current_schema()) AS schema`)) as [{ schema: string }];
    await q.query(`DROP POLICY IF EXISTS search_ids ON documents`);
    await q.query(`REVOKE ALL ON documents FROM ${SEARCH_ROLE}`);
    await q.query(`REVOKE USAGE ON SCHEMA ${schema} FROM ${SEARCH_ROLE}`);
    // The role is shared by every database of the server: it stays.
  }
}
