import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The API key lookup of every authenticated request (S6) as a function that names its own scope: the
 * key's tenant is what the lookup finds out, so it must see every tenant's keys, and with the scope set
 * inside the function (`SET app.tenant_id = ''`, restored when it returns) it does so on a connection
 * named for any tenant. The request's connection therefore keeps the tenant it was named for, instead of
 * being named for none before the lookup and for the tenant again after it: two statements fewer on
 * every request. The function returns the key and its tenant as whole rows, so columns added later come
 * with them; PL/pgSQL keeps its plan for the connection's life.
 */
export class ApiKeyLookup1796000000000 implements MigrationInterface {
  name = 'ApiKeyLookup1796000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION sdf_api_keys_by_prefix(prefix text) RETURNS TABLE (k api_keys, t tenants)
      LANGUAGE plpgsql STABLE SET app.tenant_id = '' AS $$
      BEGIN
        RETURN QUERY SELECT key_row, tenant_row
          FROM api_keys key_row JOIN tenants tenant_row ON tenant_row.id = key_row.tenant_id
         WHERE key_row.key_prefix = prefix;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION sdf_api_keys_by_prefix(text)`);
  }
}
