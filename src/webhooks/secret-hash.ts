import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { CryptoBox } from '../common/crypto-box.js';
import { SECRET_HASH_PURPOSE, secretAssociatedData } from './webhooks.service.js';

export interface SecretRehashResult {
  /** Rows whose `secret_hash` was (re)computed under the current master key by this run. */
  rehashed: number;
  /** Rows left as they were because their sealed secret could not be opened (its master key is not configured). */
  failed: string[];
}

/**
 * S7: brings every `webhooks.secret_hash` to the keyed hash under the current master key, from the
 * sealed secret. Covers rows the keyed-hash migration cleared (it holds no master key, so it removed
 * the plain SHA-256 digests and left NULL) and rows hashed under an older master key after a
 * rotation. Works in batches by id, writes a row only if it did not change meanwhile (several
 * processes may run it at once), and never logs or returns a secret.
 */
export async function rehashWebhookSecrets(
  ds: DataSource,
  box: CryptoBox,
  options: { batchSize?: number } = {},
): Promise<SecretRehashResult> {
  const batchSize = options.batchSize ?? 200;
  const current = box.keyedHash(SECRET_HASH_PURPOSE, '').split('.')[0];
  const result: SecretRehashResult = { rehashed: 0, failed: [] };
  const [{ exists }] = (await ds.query(`SELECT to_regclass('public.webhooks') IS NOT NULL AS exists`)) as {
    exists: boolean;
  }[];
  if (!exists) return result;
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const rows = (await ds.query(
      `SELECT id::text AS id, secret_enc, secret_hash
         FROM webhooks
        WHERE (secret_hash IS NULL OR split_part(secret_hash, '.', 1) <> $1) AND id > $2
        ORDER BY id
        LIMIT $3`,
      [current, after, batchSize],
    )) as { id: string; secret_enc: string; secret_hash: string | null }[];
    for (const row of rows) {
      let secret: string;
      try {
        secret = box.decryptString(row.secret_enc, secretAssociatedData(row.id));
      } catch {
        result.failed.push(row.id);
        continue;
      }
      const [, updated] = (await ds.query(
        `UPDATE webhooks SET secret_hash = $1
          WHERE id = $2 AND secret_enc = $3 AND secret_hash IS NOT DISTINCT FROM $4`,
        [box.keyedHash(SECRET_HASH_PURPOSE, secret), row.id, row.secret_enc, row.secret_hash],
      )) as [unknown, number];
      result.rehashed += updated;
    }
    if (rows.length < batchSize) return result;
    after = rows[rows.length - 1].id;
  }
}

/** Runs `rehashWebhookSecrets` when a process starts, so no plain digest outlives the first start after the migration. */
@Injectable()
export class WebhookSecretHashes implements OnApplicationBootstrap {
  private readonly logger = new Logger('Webhooks');

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly box: CryptoBox,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { rehashed, failed } = await rehashWebhookSecrets(this.ds, this.box);
    if (rehashed) this.logger.log({ msg: 'webhook secret hashes recomputed', count: rehashed });
    if (failed.length) {
      // Their deliveries fail too until the master key that sealed them is configured (MASTER_KEYS_PREVIOUS).
      this.logger.error({
        msg: 'webhook secrets sealed under a master key that is not configured',
        webhook_ids: failed,
      });
    }
  }
}
