import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CryptoBox } from '../src/common/crypto-box.js';
import { SealedSecrets } from '../src/common/sealed-secrets.js';
import { openCredentials } from '../src/connectors/credentials.js';
import { MasterKeyRotationError, rotateMasterKey } from '../src/signing/master-key-rotation.js';
import { privateKeyAssociatedData, SigningKeysService } from '../src/signing/signing-keys.service.js';
import { secretAssociatedData } from '../src/webhooks/webhooks.service.js';
import { startApp, type TestApp } from './helpers/app.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

interface KeyRow {
  id: string;
  tenant_id: string;
  key_id: string;
  private_key_enc: string;
}

/** Every form a 32-byte key could take in a log line. */
function encodings(key: Buffer): string[] {
  return [key.toString('base64'), key.toString('base64url'), key.toString('hex'), key.toString('base64').slice(0, 20)];
}

describe('master key rotation (S7) and secrets in logs', () => {
  const k1 = randomBytes(32);
  const k2 = randomBytes(32);
  const captured: string[] = [];
  const writes = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  let t: TestApp;
  let tenants: TenantFixture[];
  let webhook: { id: string };
  let connector: { id: string };
  const erpPassword = randomBytes(18).toString('base64url');
  const webhookSecret = randomBytes(24).toString('base64url');
  const plaintexts = new Map<string, string>();
  const sealedRows = (): Promise<KeyRow[]> =>
    t.ds.query(`SELECT id, tenant_id, key_id, private_key_enc FROM signing_keys ORDER BY id`);

  beforeAll(async () => {
    // Everything the service writes (JSON logs go to stdout, failures to stderr) is kept for the last test.
    // Kept, not echoed: debug logs would flood the test output.
    const capture = ((chunk: string | Uint8Array) => {
      captured.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    }) as typeof process.stdout.write;
    process.stdout.write = capture;
    process.stderr.write = capture;
    // As the owner: a test makes a table with a sealed column of its own.
    t = await startApp({
      env: { MASTER_KEY: k1.toString('base64'), MASTER_KEY_ID: '1', LOG_LEVEL: 'debug', DATABASE_APP_ROLE: '' },
    });
    tenants = [await createTenant(t), await createTenant(t)];
    await t
      .http()
      .post(`/admin/tenants/${tenants[0].id}/signing-keys`)
      .set('Authorization', `Bearer ${t.adminToken()}`)
      .send({ algorithm: 'RSA-2048' })
      .expect(201);
    webhook = (
      await t
        .http()
        .post('/webhooks')
        .set('X-API-Key', tenants[1].apiKey)
        .send({ url: 'https://receiver.example/hook', secret: webhookSecret, events: ['document.signed'] })
        .expect(201)
    ).body as { id: string };
    connector = (
      await t
        .http()
        .post('/connectors/configure')
        .set('X-API-Key', tenants[1].apiKey)
        .send({
          erp_type: 'ORACLE',
          base_url: 'https://erp.example.com',
          auth_type: 'basic',
          credentials: { username: 'sdf', password: erpPassword },
        })
        .expect(201)
    ).body as { id: string };
    const box1 = new CryptoBox(new Map([['1', k1]]), '1');
    for (const row of await sealedRows()) {
      plaintexts.set(row.id, box1.decryptString(row.private_key_enc, privateKeyAssociatedData(row)));
    }
  });
  afterAll(async () => {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
    await t.close();
  });

  it('starts with every private key sealed under master key 1', async () => {
    const rows = await sealedRows();
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(CryptoBox.keyIdOf(row.private_key_enc)).toBe('1');
  });

  it('fails with a clear error, changing nothing, when an old master key is not configured', async () => {
    const before = await sealedRows();
    const onlyNew = new CryptoBox(new Map([['2', k2]]), '2');
    const failure = rotateMasterKey(t.ds, onlyNew, t.app.get(SealedSecrets));
    await expect(failure).rejects.toBeInstanceOf(MasterKeyRotationError);
    // Columns go in name order: connectors first.
    await expect(failure).rejects.toThrow(/connectors\.credentials_enc of row .*master key 1/);
    expect(await sealedRows()).toEqual(before);
  });

  it('re-encrypts every sealed secret under the new master key, in batches, and reports counts', async () => {
    const box = new CryptoBox(
      new Map([
        ['2', k2],
        ['1', k1],
      ]),
      '2',
    );
    const result = await rotateMasterKey(t.ds, box, t.app.get(SealedSecrets), { batchSize: 2 });
    expect(result.currentKeyId).toBe('2');
    expect(result.resealed).toBe(5);
    expect(result.columns.map((c) => `${c.table}.${c.column}`)).toEqual([
      'connectors.credentials_enc',
      'signing_keys.private_key_enc',
      'webhooks.secret_enc',
    ]);
    expect(result.columns[0]).toEqual({ table: 'connectors', column: 'credentials_enc', resealed: 1, current: 0 });
    expect(result.columns[1]).toEqual({ table: 'signing_keys', column: 'private_key_enc', resealed: 3, current: 0 });
    expect(result.columns[2]).toEqual({ table: 'webhooks', column: 'secret_enc', resealed: 1, current: 0 });
    // Readable with the new master key alone, and the same private keys as before.
    const onlyNew = new CryptoBox(new Map([['2', k2]]), '2');
    for (const row of await sealedRows()) {
      expect(CryptoBox.keyIdOf(row.private_key_enc)).toBe('2');
      expect(onlyNew.decryptString(row.private_key_enc, privateKeyAssociatedData(row))).toBe(plaintexts.get(row.id));
    }
    const [{ secret_enc }] = (await t.ds.query(`SELECT secret_enc FROM webhooks WHERE id = $1`, [webhook.id])) as {
      secret_enc: string;
    }[];
    expect(onlyNew.decryptString(secret_enc, secretAssociatedData(webhook.id))).toBe(webhookSecret);
    const [{ credentials_enc }] = (await t.ds.query(`SELECT credentials_enc FROM connectors WHERE id = $1`, [
      connector.id,
    ])) as { credentials_enc: string }[];
    expect(openCredentials(onlyNew, connector.id, credentials_enc)).toMatchObject({ password: erpPassword });
    // A second run has nothing left to do.
    const again = await rotateMasterKey(t.ds, box, t.app.get(SealedSecrets));
    expect(again.resealed).toBe(0);
    expect(again.columns[1]).toEqual({ table: 'signing_keys', column: 'private_key_enc', resealed: 0, current: 3 });
  });

  it('covers any registered sealed column with its own associated data, and leaves NULLs alone', async () => {
    await t.ds.query(`CREATE TABLE sealed_probe (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), secret_enc text)`);
    const box1 = new CryptoBox(new Map([['1', k1]]), '1');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const [{ id }] = (await t.ds.query(`INSERT INTO sealed_probe DEFAULT VALUES RETURNING id`)) as { id: string }[];
      await t.ds.query(`UPDATE sealed_probe SET secret_enc = $1 WHERE id = $2`, [
        box1.encrypt(`s${i}`, `probe:${id}`),
        id,
      ]);
      ids.push(id);
    }
    await t.ds.query(`INSERT INTO sealed_probe (secret_enc) VALUES (NULL)`);
    const column = {
      table: 'sealed_probe',
      column: 'secret_enc',
      inputs: [],
      associatedData: (r: Record<string, string>) => `probe:${r.id}`,
    };
    const box = new CryptoBox(
      new Map([
        ['2', k2],
        ['1', k1],
      ]),
      '2',
    );
    const result = await rotateMasterKey(t.ds, box, t.app.get(SealedSecrets), { columns: [column], batchSize: 2 });
    expect(result.columns).toEqual([{ table: 'sealed_probe', column: 'secret_enc', resealed: 5, current: 0 }]);
    const onlyNew = new CryptoBox(new Map([['2', k2]]), '2');
    for (const [i, id] of ids.entries()) {
      const [{ secret_enc }] = (await t.ds.query(`SELECT secret_enc FROM sealed_probe WHERE id = $1`, [id])) as {
        secret_enc: string;
      }[];
      expect(onlyNew.decryptString(secret_enc, `probe:${id}`)).toBe(`s${i}`);
    }
  });

  it('lets a process holding only the new master key sign, list and create keys', async () => {
    const t2 = await startApp({ shareWith: t, env: { MASTER_KEY: k2.toString('base64'), MASTER_KEY_ID: '2' } });
    try {
      const service = t2.app.get(SigningKeysService);
      for (const tenant of tenants) {
        const active = await service.activeKeyForSigning(tenant.id);
        expect(active.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
      }
      const fresh = await createTenant(t2);
      const [row] = (await t2.ds.query(`SELECT private_key_enc FROM signing_keys WHERE tenant_id = $1`, [
        fresh.id,
      ])) as KeyRow[];
      expect(CryptoBox.keyIdOf(row.private_key_enc)).toBe('2');
      await t2.http().get('/keys').set('X-API-Key', fresh.apiKey).expect(200);
    } finally {
      await t2.close();
    }
  });

  it('never writes a master key or a private key to the logs', async () => {
    await t.http().get(`/.well-known/sdf-keys/${tenants[0].slug}`).expect(200);
    await t.http().get('/keys').set('X-API-Key', tenants[1].apiKey).expect(200);
    const text = captured.join('');
    // The capture works: debug-level request lines were written.
    expect(text).toContain('"msg":"request"');
    for (const secret of [...encodings(k1), ...encodings(k2), webhookSecret]) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/PRIVATE KEY/);
    for (const pem of plaintexts.values()) {
      expect(text).not.toContain(
        pem
          .replace(/-----[A-Z ]+-----/g, '')
          .replace(/\s+/g, '')
          .slice(0, 40),
      );
    }
  });
});
