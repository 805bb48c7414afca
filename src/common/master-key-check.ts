import { CryptoBox } from './crypto-box.js';

/** Runs one SQL statement and returns its rows (a pg client or a TypeORM data source behind it). */
export type Query = (sql: string, params?: unknown[]) => Promise<Record<string, string>[]>;

/** Raised when the configured master keys are not the ones the stored secrets were sealed with. */
export class MasterKeyMismatchError extends Error {
  override readonly name = 'MasterKeyMismatchError';
}

/** Enough of a check value to tell two keys apart in a message; never the key. */
const short = (check: string) => check.slice(0, 12);

/**
 * S7: the configured master keys against the check values stored with the sealed data
 * (master_key_checks), before anything can be sealed or opened. Refuses when a configured key id has
 * another recorded check value, or when check values are recorded and none of the configured keys is
 * among them; otherwise records the current key's check value when it is new (the first start, or step 2
 * of a rotation). `source` says where the current key came from (the variable or the secrets file).
 * A database without the table yet (migrations pending) is not checked. `rotating`: only the first
 * refusal, and nothing recorded (the rotation records its key once it is done).
 */
export async function verifyMasterKeys(
  query: Query,
  box: CryptoBox,
  source: string,
  options: { rotating?: boolean } = {},
): Promise<void> {
  const [{ present }] = await query(`SELECT (to_regclass('master_key_checks') IS NOT NULL)::text AS present`);
  if (present !== 'true') return;
  const recorded = new Map(
    (await query(`SELECT key_id, check_value FROM master_key_checks ORDER BY key_id`)).map((r) => [
      r.key_id,
      r.check_value,
    ]),
  );
  const from = (id: string) => (id === box.currentKeyId ? source : 'MASTER_KEYS_PREVIOUS');
  for (const id of box.keyIds) {
    const stored = recorded.get(id);
    if (stored !== undefined && stored !== box.checkValue(id)) {
      throw new MasterKeyMismatchError(
        `master key mismatch: the configured key id ${id} (from ${from(id)}, check value ` +
          `${short(box.checkValue(id))}) is not the key id ${id} the stored secrets were sealed with (check value ` +
          `${short(stored)}). Start with the secrets file or MASTER_KEY the data was sealed with; nothing was changed.`,
      );
    }
  }
  // A rotation opens the old secrets with the old keys: a missing one is its own error, naming the row.
  if (options.rotating) return;
  if (recorded.size > 0 && !box.keyIds.some((id) => recorded.has(id))) {
    const sealed = [...recorded].map(([id, check]) => `${id} (check value ${short(check)})`).join(', ');
    const configured = box.keyIds
      .map((id) => `${id} (from ${from(id)}, check value ${short(box.checkValue(id))})`)
      .join(', ');
    throw new MasterKeyMismatchError(
      `master key mismatch: the stored secrets were sealed under key id ${sealed}, and none is configured: ` +
        `configured key id ${configured}. To change the master key, keep the old one in MASTER_KEYS_PREVIOUS ` +
        'and rotate (docs/signing-keys.md); nothing was changed.',
    );
  }
  if (!recorded.has(box.currentKeyId)) {
    await query(`INSERT INTO master_key_checks (key_id, check_value) VALUES ($1, $2) ON CONFLICT (key_id) DO NOTHING`, [
      box.currentKeyId,
      box.checkValue(),
    ]);
    // Another process with another key may have recorded this id first.
    const [row] = await query(`SELECT check_value FROM master_key_checks WHERE key_id = $1`, [box.currentKeyId]);
    if (row?.check_value !== box.checkValue()) {
      throw new MasterKeyMismatchError(
        `master key mismatch: the configured key id ${box.currentKeyId} (from ${source}, check value ` +
          `${short(box.checkValue())}) is not the key id ${box.currentKeyId} another process recorded (check ` +
          `value ${short(row?.check_value ?? '')}).`,
      );
    }
  }
}

/**
 * After a complete rotation every secret is sealed under the current key: its check value is the one
 * recorded, and the old keys' go (a process holding only an old key is then refused).
 */
export async function recordRotatedMasterKey(query: Query, box: CryptoBox): Promise<void> {
  await query(
    `INSERT INTO master_key_checks (key_id, check_value) VALUES ($1, $2)
     ON CONFLICT (key_id) DO UPDATE SET check_value = EXCLUDED.check_value, recorded_at = now()`,
    [box.currentKeyId, box.checkValue()],
  );
  await query(`DELETE FROM master_key_checks WHERE key_id <> $1`, [box.currentKeyId]);
}

/** verifyMasterKeys over a short-lived connection, before the application (or a command) starts. */
export async function assertMasterKeys(
  databaseUrl: string,
  secrets: { masterKeys: ReadonlyMap<string, Buffer>; currentKeyId: string; masterKeySource: string },
): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'sdf master key check' });
  await client.connect();
  try {
    const query: Query = async (sql, params) => (await client.query(sql, params)).rows as Record<string, string>[];
    await verifyMasterKeys(query, new CryptoBox(secrets.masterKeys, secrets.currentKeyId), secrets.masterKeySource);
  } finally {
    await client.end();
  }
}
