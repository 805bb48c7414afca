import { createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookSecretKeyedHash1764000008000 } from '../migrations/1764000008000-webhook-secret-keyed-hash.js';
import { rotateMasterKey } from '../src/signing/master-key-rotation.js';
import { CryptoBox } from '../src/common/crypto-box.js';
import { SealedSecrets } from '../src/common/sealed-secrets.js';
import { startApp, type TestApp } from './helpers/app.js';
import { recordDocumentEvent, registerWebhook } from './helpers/events.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { verifySignature, WebhookReceiver } from './helpers/webhook-receiver.js';

/** A weak, person-chosen secret (the shortest length the API takes): the kind a plain digest would give away. */
const WEAK = 'password12345678';

/** What an attacker holding a database dump could compare a guess against. */
function unkeyedDigests(secret: string): string[] {
  return ['sha256', 'sha1', 'md5', 'sha512'].flatMap((alg) => {
    const d = createHash(alg).update(secret).digest();
    return [d.toString('hex'), d.toString('base64'), d.toString('base64url')];
  });
}

/** The keyed hash as docs/webhooks.md defines it, computed here independently of the service. */
function expectedHash(masterKey: Buffer, keyId: string, secret: string): string {
  const key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'sdf keyed-hash v1 webhook-secret', 32));
  return `v${keyId}.` + createHmac('sha256', key).update(secret).digest('hex');
}

describe('webhook secret_hash is a keyed hash (S7)', () => {
  const k1 = randomBytes(32);
  const k2 = randomBytes(32);
  let t: TestApp;
  let tenant: TenantFixture;
  let receiver: WebhookReceiver;
  const hashOf = async (id: string): Promise<string | null> =>
    ((await t.ds.query(`SELECT secret_hash FROM webhooks WHERE id = $1`, [id])) as { secret_hash: string | null }[])[0]
      .secret_hash;

  beforeAll(async () => {
    // As the owner: a test runs a migration down and up again.
    t = await startApp({
      env: {
        MASTER_KEY: k1.toString('base64'),
        MASTER_KEY_ID: '1',
        WEBHOOK_DISPATCH_INTERVAL_MS: '50',
        DATABASE_APP_ROLE: '',
      },
    });
    tenant = await createTenant(t);
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('stores for a weak secret only the HMAC under a key derived from the master key; nothing in any table checks a guess', async () => {
    const id = await registerWebhook(t, tenant.apiKey, {
      url: 'http://127.0.0.1:9/hook',
      secret: WEAK,
      events: ['document.signed'],
    });
    const stored = await hashOf(id);
    expect(stored).toBe(expectedHash(k1, '1', WEAK));
    // Under any other master key (an attacker's guess at the key) the same secret gives another value.
    expect(expectedHash(k2, '1', WEAK)).not.toBe(stored);
    expect(stored).not.toContain(createHmac('sha256', k1).update(WEAK).digest('hex'));

    // The whole database, as a dump would hold it: no table holds the secret or an unkeyed digest of it.
    const tables = (await t.ds.query(
      `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
    )) as { tablename: string }[];
    expect(tables.map((r) => r.tablename)).toContain('webhooks');
    let dump = '';
    for (const { tablename } of tables) {
      const rows = (await t.ds.query(`SELECT row_to_json(x)::text AS j FROM "${tablename}" x`)) as { j: string }[];
      dump += rows.map((r) => r.j).join('\n');
    }
    expect(dump).toContain(stored);
    expect(dump).not.toContain(WEAK);
    for (const digest of unkeyedDigests(WEAK)) expect(dump).not.toContain(digest);
  });

  it('clears plain digests in the migration and recomputes them from the sealed secret when the service starts', async () => {
    const id = await registerWebhook(t, tenant.apiKey, {
      url: 'http://127.0.0.1:9/legacy',
      secret: WEAK,
      events: ['document.signed'],
    });
    const migration = new WebhookSecretKeyedHash1764000008000();
    const runner = t.ds.createQueryRunner();
    try {
      // The table as it was before the keyed hash: a plain SHA-256 in secret_hash.
      await migration.down(runner);
      const legacy = createHash('sha256').update(WEAK).digest('hex');
      await runner.query(`UPDATE webhooks SET secret_hash = $1 WHERE id = $2`, [legacy, id]);
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    // The migration has no master key: it leaves no digest behind, and nothing to check a guess against.
    const [{ n }] = (await t.ds.query(`SELECT count(*)::int AS n FROM webhooks WHERE secret_hash IS NOT NULL`)) as {
      n: number;
    }[];
    expect(n).toBe(0);

    const t2 = await startApp({ shareWith: t });
    await t2.close();
    expect(await hashOf(id)).toBe(expectedHash(k1, '1', WEAK));
    const [{ stale }] = (await t.ds.query(
      `SELECT count(*)::int AS stale FROM webhooks WHERE secret_hash IS NULL OR secret_hash !~ '^v1\\.[0-9a-f]{64}$'`,
    )) as { stale: number }[];
    expect(stale).toBe(0);
  });

  it('follows a master-key rotation: a hash under the old key id is recomputed at start and by rotate-master-key', async () => {
    const id = await registerWebhook(t, tenant.apiKey, {
      url: 'http://127.0.0.1:9/rotated',
      secret: WEAK,
      events: ['document.signed'],
    });
    expect(await hashOf(id)).toMatch(/^v1\./);
    const rotatedEnv = {
      MASTER_KEY: k2.toString('base64'),
      MASTER_KEY_ID: '2',
      MASTER_KEYS_PREVIOUS: `1:${k1.toString('base64')}`,
    };
    const t2 = await startApp({ shareWith: t, env: rotatedEnv });
    await t2.close();
    expect(await hashOf(id)).toBe(expectedHash(k2, '2', WEAK));

    // Back under key 1 (as a rotation the other way would be): the rotation command recomputes it too.
    const box = new CryptoBox(
      new Map([
        ['1', k1],
        ['2', k2],
      ]),
      '1',
    );
    const result = await rotateMasterKey(t.ds, box, t.app.get(SealedSecrets));
    expect(result.rehashed).toBeGreaterThanOrEqual(1);
    expect(await hashOf(id)).toBe(expectedHash(k1, '1', WEAK));
    expect((await rotateMasterKey(t.ds, box, t.app.get(SealedSecrets))).rehashed).toBe(0);
  });

  it('still signs deliveries with the secret itself', async () => {
    const other = await createTenant(t);
    await registerWebhook(t, other.apiKey, { url: receiver.url(), secret: WEAK, events: ['document.signed'] });
    const payload = await recordDocumentEvent(t, other.id, 'document.signed');
    const [delivery] = await receiver.waitFor(1);
    expect(delivery.json.id).toBe(payload.id);
    expect(verifySignature(WEAK, delivery.raw, delivery.headers['x-sdf-signature'])).toBe(true);
    expect(verifySignature(WEAK + 'x', delivery.raw, delivery.headers['x-sdf-signature'])).toBe(false);
  });
});
