import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * C1: per-tenant SAML. Beside the SDF-SPEC fields: IdP metadata given inline (for an IdP without a
 * metadata URL), what was parsed from the last good metadata (SSO URL, IdP entity id, every signing
 * certificate), when it was last refreshed and the last refresh error, whether IdP-initiated login
 * is allowed, and the return paths RelayState may name.
 */
export class Saml1764000050000 implements MigrationInterface {
  name = 'Saml1764000050000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE tenants
        ADD COLUMN saml_metadata_xml text,
        ADD COLUMN saml_idp_initiated boolean NOT NULL DEFAULT false,
        ADD COLUMN saml_return_paths text[] NOT NULL DEFAULT '{}',
        ADD COLUMN saml_idp_entity_id text,
        ADD COLUMN saml_idp_sso_url text,
        ADD COLUMN saml_idp_certificates jsonb NOT NULL DEFAULT '[]',
        ADD COLUMN saml_metadata_refreshed_at timestamptz,
        ADD COLUMN saml_metadata_error text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE tenants
        DROP COLUMN saml_metadata_error,
        DROP COLUMN saml_metadata_refreshed_at,
        DROP COLUMN saml_idp_certificates,
        DROP COLUMN saml_idp_sso_url,
        DROP COLUMN saml_idp_entity_id,
        DROP COLUMN saml_return_paths,
        DROP COLUMN saml_idp_initiated,
        DROP COLUMN saml_metadata_xml`);
  }
}
