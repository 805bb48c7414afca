import type { DataSource } from 'typeorm';
import { CryptoBox } from '../common/crypto-box.js';
import {
  MasterKeyMismatchError,
  recordRotatedMasterKey,
  verifyMasterKeys,
  type Query,
} from '../common/master-key-check.js';
import type { SealedColumn, SealedSecrets } from '../common/sealed-secrets.js';
import { rehashWebhookSecrets } from '../webhooks/secret-hash.js';

export interface ColumnRotation {
  table: string;
  column: string;
  /** Values re-encrypted under the current master key by this run. */
  resealed: number;
  /** Values already under the current master key. */
  current: number;
  skipped?: 'table missing';
}

export interface MasterKeyRotationResult {
  currentKeyId: string;
  resealed: number;
  columns: ColumnRotation[];
  /** Keyed hashes of webhook secrets recomputed under the current master key (S7, `webhooks.secret_hash`). */
  rehashed: number;
}

export class MasterKeyRotationError extends Error {
  override readonly name = 'MasterKeyRotationError';
}

const quote = (identifier: string) => `"${identifier.replace(/"/g, '""')}"`;

/**
 * S7 master-key rotation, step 2 of the procedure in docs/signing-keys.md: re-encrypts every sealed
 * secret of every column registered in `registry` (or only `options.columns`; a table that does not exist
 * is skipped and reported) that is not under the current master key id (`cryptoBox` must hold the current key and
 * every older key still in use). Works in batches, each in its own transaction with the rows locked,
 * and writes a row only if it did not change meanwhile; safe to interrupt and to run again (a second
 * run reseals nothing). Never logs or returns key material: only counts.
 */
export async function rotateMasterKey(
  dataSource: DataSource,
  cryptoBox: CryptoBox,
  registry: SealedSecrets,
  options: { batchSize?: number; columns?: SealedColumn[] } = {},
): Promise<MasterKeyRotationResult> {
  const batchSize = options.batchSize ?? 200;
  const query: Query = (sql, params) => dataSource.query(sql, params);
  // A key id configured with another key than the data's would seal everything under a wrong key.
  try {
    await verifyMasterKeys(query, cryptoBox, 'the configured MASTER_KEY', { rotating: true });
  } catch (err) {
    if (err instanceof MasterKeyMismatchError) throw new MasterKeyRotationError(err.message);
    throw err;
  }
  const currentPrefix = sealedPrefixOf(cryptoBox.encrypt(''));
  const result: MasterKeyRotationResult = {
    currentKeyId: currentPrefix.slice(1),
    resealed: 0,
    columns: [],
    rehashed: 0,
  };
  for (const sealed of options.columns ?? registry.columns()) {
    const entry: ColumnRotation = { table: sealed.table, column: sealed.column, resealed: 0, current: 0 };
    result.columns.push(entry);
    const [{ exists }] = (await dataSource.query(`SELECT to_regclass($1) IS NOT NULL AS exists`, [
      `public.${quote(sealed.table)}`,
    ])) as { exists: boolean }[];
    if (!exists) {
      entry.skipped = 'table missing';
      continue;
    }
    const table = quote(sealed.table);
    const column = quote(sealed.column);
    const inputs = sealed.inputs.map((c) => `${quote(c)}::text AS ${quote(c)}`);
    for (;;) {
      const done = await dataSource.transaction(async (m) => {
        const rows = (await m.query(
          `SELECT id::text AS id, ${column} AS sealed${inputs.map((i) => ', ' + i).join('')}
             FROM ${table}
            WHERE ${column} IS NOT NULL AND split_part(${column}, '.', 1) <> $1
            ORDER BY id
            LIMIT $2
              FOR UPDATE`,
          [currentPrefix, batchSize],
        )) as (Record<string, string> & { id: string; sealed: string })[];
        for (const row of rows) {
          let resealed: string;
          try {
            resealed = cryptoBox.reseal(row.sealed, sealed.associatedData(row));
          } catch (err) {
            throw new MasterKeyRotationError(
              `cannot re-encrypt ${sealed.table}.${sealed.column} of row ${row.id} (sealed under master key ` +
                `${CryptoBox.keyIdOf(row.sealed)}): ${(err as Error).message}`,
            );
          }
          await m.query(`UPDATE ${table} SET ${column} = $1 WHERE id = $2 AND ${column} = $3`, [
            resealed,
            row.id,
            row.sealed,
          ]);
        }
        entry.resealed += rows.length;
        return rows.length < batchSize;
      });
      if (done) break;
    }
    const [{ count }] = (await dataSource.query(
      `SELECT count(*)::int AS count FROM ${table} WHERE split_part(${column}, '.', 1) = $1`,
      [currentPrefix],
    )) as { count: number }[];
    entry.current = count - entry.resealed;
    result.resealed += entry.resealed;
  }
  // A keyed hash is under a master key too: recompute the stale ones from the (now resealed) secrets.
  const hashes = await rehashWebhookSecrets(dataSource, cryptoBox, { batchSize });
  if (hashes.failed.length) {
    throw new MasterKeyRotationError(`cannot recompute webhooks.secret_hash of row ${hashes.failed[0]}`);
  }
  result.rehashed = hashes.rehashed;
  // Every secret of every sealed column is under the current key now: only its check value stays.
  if (!options.columns) await recordRotatedMasterKey(query, cryptoBox);
  return result;
}

function sealedPrefixOf(sealed: string): string {
  return sealed.slice(0, sealed.indexOf('.'));
}
