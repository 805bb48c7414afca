import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The networks (CIDR) and host names a tenant's connectors may reach on the managed deployment although
 * they are not public: set by the operator alone (admin API), empty for every tenant until then.
 */
export class ConnectorPrivateTargets1795593221144 implements MigrationInterface {
  name = 'ConnectorPrivateTargets1795593221144';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tenants ADD COLUMN connector_private_targets text[] NOT NULL DEFAULT '{}'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tenants DROP COLUMN connector_private_targets`);
  }
}
