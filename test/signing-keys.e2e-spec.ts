import { createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerFormatCommands } from '../src/cli/format-commands.js';
import { CryptoBox } from '../src/common/crypto-box.js';
import { signArchive, verifyArchive } from '../src/sdf/index.js';
import { buildSdf } from '../src/sdf/testing/build-sdf.js';
import { privateKeyAssociatedData, SigningKeysService } from '../src/signing/signing-keys.service.js';
import { startApp, type TestApp } from './helpers/app.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

interface KeyRow {
  id: string;
  tenant_id: string;
  algorithm: string;
  public_key: string;
  private_key_enc: string;
  is_active: boolean;
  key_id: string;
}

interface Jwk {
  kid: string;
  [member: string]: unknown;
}

/** Runs the `sdf` command line's format commands in process, capturing what they print. */
async function runSdf(args: string[]): Promise<{ exitCode: number; output: string }> {
  const program = new Command('sdf').exitOverride();
  registerFormatCommands(program);
  const chunks: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => chunks.push(String(chunk)) > 0) as typeof process.stdout.write;
  try {
    await program.parseAsync(['node', 'sdf', ...args]);
  } finally {
    process.stdout.write = write;
  }
  const exitCode = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { exitCode, output: chunks.join('') };
}

const pemBody = (pem: string) => pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');

describe('signing keys (S7, S8)', () => {
  let t: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let service: SigningKeysService;
  const admin = () => `Bearer ${t.adminToken()}`;
  const rows = (tenantId: string): Promise<KeyRow[]> =>
    t.ds.query(`SELECT * FROM signing_keys WHERE tenant_id = $1 ORDER BY created_at`, [tenantId]);
  const rotate = (tenantId: string, algorithm: string) =>
    t.http().post(`/admin/tenants/${tenantId}/signing-keys`).set('Authorization', admin()).send({ algorithm });

  beforeAll(async () => {
    t = await startApp();
    a = await createTenant(t);
    b = await createTenant(t);
    service = t.app.get(SigningKeysService);
  });
  afterAll(() => t.close());

  it('gives every new tenant one active ECDSA-P256 key, listed by GET /keys with PEM and JWK', async () => {
    const [row, ...more] = await rows(a.id);
    expect(more).toEqual([]);
    expect(row).toMatchObject({ algorithm: 'ECDSA-P256', is_active: true });
    const res = await t.http().get('/keys').set('X-API-Key', a.apiKey).expect(200);
    expect(res.body).toEqual({
      keys: [
        {
          key_id: row.key_id,
          algorithm: 'ECDSA-P256',
          is_active: true,
          created_at: expect.any(String),
          public_key: row.public_key,
          public_jwk: {
            kty: 'EC',
            crv: 'P-256',
            x: expect.any(String),
            y: expect.any(String),
            kid: row.key_id,
            alg: 'ES256',
            use: 'sig',
          },
        },
      ],
    });
    expect(res.body.keys[0].public_key).toMatch(/^-----BEGIN PUBLIC KEY-----/);
  });

  it('keeps no private key in clear in any signing_keys row', async () => {
    await rotate(a.id, 'RSA-2048').expect(201);
    const all: KeyRow[] = await t.ds.query(`SELECT * FROM signing_keys`);
    expect(all.length).toBeGreaterThanOrEqual(3);
    const box = t.app.get(CryptoBox);
    for (const row of all) {
      const text = JSON.stringify(row);
      expect(text).not.toMatch(/PRIVATE KEY/);
      expect(row.private_key_enc).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      const privatePem = box.decryptString(row.private_key_enc, privateKeyAssociatedData(row));
      expect(privatePem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
      // Not even the base64 body of the key is stored anywhere in the row.
      expect(text).not.toContain(pemBody(privatePem).slice(0, 40));
      // The sealed private key belongs to the stored public key.
      const derived = createPublicKey(createPrivateKey(privatePem)).export({ type: 'spki', format: 'pem' });
      expect(derived.toString()).toBe(row.public_key);
      // Bound to its row: with another tenant's associated data it does not decrypt.
      expect(() =>
        box.decrypt(
          row.private_key_enc,
          privateKeyAssociatedData({ ...row, tenant_id: '00000000-0000-4000-8000-000000000000' }),
        ),
      ).toThrow();
    }
    // The database refuses a clear PEM whatever writes it.
    const pem = createPrivateKey(box.decryptString(all[0].private_key_enc, privateKeyAssociatedData(all[0])))
      .export({ type: 'pkcs8', format: 'pem' })
      .toString();
    await expect(
      t.ds.query(
        `INSERT INTO signing_keys (tenant_id, algorithm, public_key, private_key_enc, is_active, key_id)
         VALUES ($1, 'ECDSA-P256', $2, $3, false, 'clear-text-attempt')`,
        [b.id, all[0].public_key, pem],
      ),
    ).rejects.toThrow(/check constraint/);
  });

  it('rotates: the new key is active, old ones stay for lookup, signatures made before stay trusted', async () => {
    const tenant = await createTenant(t);
    const first = await service.activeKeyForSigning(tenant.id);
    expect(first.algorithm).toBe('ECDSA-P256');
    const signedBefore = await signArchive(buildSdf(), first);

    const res = await rotate(tenant.id, 'RSA-2048').expect(201);
    expect(res.body).toMatchObject({ algorithm: 'RSA-2048', is_active: true });
    expect(res.body.public_jwk).toEqual({
      kty: 'RSA',
      n: expect.any(String),
      e: 'AQAB',
      kid: res.body.key_id,
      alg: 'RS256',
      use: 'sig',
    });
    expect(res.body.key_id).not.toBe(first.keyId);
    const second = await service.activeKeyForSigning(tenant.id);
    expect(second).toMatchObject({ keyId: res.body.key_id, algorithm: 'RSA-2048' });
    expect(second.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);

    const lookup = service.keyLookup(tenant.id);
    expect(await lookup(first.keyId)).toMatchObject({ keyId: first.keyId, isActive: false, algorithm: 'ECDSA-P256' });
    expect(await lookup(second.keyId)).toMatchObject({ keyId: second.keyId, isActive: true, algorithm: 'RSA-2048' });
    expect(await lookup('no-such-kid')).toBeUndefined();

    // F9 with the format core's own verifier: the old signature is still valid and trusted after rotation.
    expect(await verifyArchive(signedBefore, { keyLookup: lookup })).toMatchObject({
      valid: true,
      trusted: true,
      key_id: first.keyId,
      algorithm: 'ECDSA-P256',
    });
    const signedAfter = await signArchive(buildSdf(), second);
    expect(await verifyArchive(signedAfter, { keyLookup: lookup })).toMatchObject({
      valid: true,
      trusted: true,
      key_id: second.keyId,
      algorithm: 'RSA-2048',
    });

    // And back to ECDSA-P256: three keys, exactly one active, newest first in GET /keys.
    const third = (await rotate(tenant.id, 'ECDSA-P256').expect(201)).body;
    const listed = (await t.http().get('/keys').set('X-API-Key', tenant.apiKey).expect(200)).body.keys as {
      key_id: string;
      is_active: boolean;
    }[];
    expect(listed.map((k) => [k.key_id, k.is_active])).toEqual([
      [third.key_id, true],
      [second.keyId, false],
      [first.keyId, false],
    ]);
    expect(await verifyArchive(signedAfter, { keyLookup: service.keyLookup(tenant.id) })).toMatchObject({
      trusted: true,
    });

    const audit = await t.ds.query(
      `SELECT actor, resource_id, metadata FROM audit_log WHERE tenant_id = $1 AND action = 'signing_key.rotate' ORDER BY created_at`,
      [tenant.id],
    );
    expect(audit).toEqual([
      {
        actor: 'admin:test-operator',
        resource_id: second.keyId,
        metadata: { key_id: second.keyId, algorithm: 'RSA-2048', deactivated_key_ids: [first.keyId] },
      },
      {
        actor: 'admin:test-operator',
        resource_id: third.key_id,
        metadata: { key_id: third.key_id, algorithm: 'ECDSA-P256', deactivated_key_ids: [second.keyId] },
      },
    ]);
  });

  it('serves a public JWKS per tenant slug that verifies signatures offline', async () => {
    const tenant = await createTenant(t);
    const ecKey = await service.activeKeyForSigning(tenant.id);
    const ecSigned = await signArchive(buildSdf(), ecKey);
    await rotate(tenant.id, 'RSA-2048').expect(201);
    const rsaSigned = await signArchive(buildSdf(), await service.activeKeyForSigning(tenant.id));

    const res = await t.http().get(`/.well-known/sdf-keys/${tenant.slug}`).expect(200);
    expect(res.headers['content-type']).toMatch(/json/);
    const jwks = res.body as { keys: Jwk[] };
    expect(jwks.keys).toHaveLength(2);
    const [rsa, ec] = jwks.keys;
    expect(Object.keys(ec).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    expect(ec).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: ecKey.keyId });
    expect(Object.keys(rsa).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    expect(rsa).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', e: 'AQAB' });

    // A recipient with nothing but the JWKS trusts both signatures.
    const fromJwks = (kid: string) => {
      const jwk = jwks.keys.find((k) => k.kid === kid);
      return jwk && { publicKey: jwk };
    };
    for (const signed of [ecSigned, rsaSigned]) {
      expect(await verifyArchive(signed, { keyLookup: fromJwks })).toMatchObject({ valid: true, trusted: true });
    }
  });

  it('is what `sdf verify --jwks-url` needs: the CLI trusts signatures made before and after a rotation', async () => {
    const tenant = await createTenant(t);
    const dir = mkdtempSync(join(tmpdir(), 'sdf-jwks-'));
    try {
      const before = join(dir, 'before.sdf');
      writeFileSync(before, await signArchive(buildSdf(), await service.activeKeyForSigning(tenant.id)));
      await rotate(tenant.id, 'RSA-2048').expect(201);
      const after = join(dir, 'after.sdf');
      writeFileSync(after, await signArchive(buildSdf(), await service.activeKeyForSigning(tenant.id)));
      await t.app.listen(0, '127.0.0.1');
      const url = `${(await t.app.getUrl()).replace('[::1]', '127.0.0.1')}/.well-known/sdf-keys/${tenant.slug}`;
      for (const file of [before, after]) {
        const { exitCode, output } = await runSdf(['verify', file, '--jwks-url', url, '--json']);
        expect(exitCode).toBe(0);
        expect(JSON.parse(output)).toMatchObject({ valid: true, trusted: true });
      }
      // The same files against another tenant's JWKS: valid signatures, but not trusted (exit 1).
      const otherUrl = url.replace(tenant.slug, b.slug);
      expect((await runSdf(['verify', after, '--jwks-url', otherUrl, '--json'])).exitCode).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers 404 for an unknown or malformed slug, without credentials', async () => {
    for (const slug of ['no-such-tenant', 'UPPER', '%2e%2e', 'a'.repeat(80)]) {
      const res = await t.http().get(`/.well-known/sdf-keys/${slug}`).expect(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
  });

  it("never lists or trusts another tenant's keys", async () => {
    const aKeys = (await rows(a.id)).map((r) => r.key_id);
    const bKeys = (await rows(b.id)).map((r) => r.key_id);
    expect(aKeys.length).toBeGreaterThan(0);
    expect(bKeys).toHaveLength(1);
    const listedB = (await t.http().get('/keys').set('X-API-Key', b.apiKey).expect(200)).body.keys as {
      key_id: string;
    }[];
    expect(listedB.map((k) => k.key_id)).toEqual(bKeys);
    const jwksB = (await t.http().get(`/.well-known/sdf-keys/${b.slug}`).expect(200)).body as { keys: Jwk[] };
    expect(jwksB.keys.map((k) => k.kid)).toEqual(bKeys);
    for (const kid of aKeys) expect(await service.keyLookup(b.id)(kid)).toBeUndefined();
    // A's signature checks out with B's lookup only as untrusted (its embedded key), never as B's.
    const signedByA = await signArchive(buildSdf(), await service.activeKeyForSigning(a.id));
    expect(await verifyArchive(signedByA, { keyLookup: service.keyLookup(b.id) })).toMatchObject({ trusted: false });
  });

  it('guards the rotation endpoint: admin only, known tenant, one of the two algorithms', async () => {
    await t
      .http()
      .post(`/admin/tenants/${a.id}/signing-keys`)
      .set('X-API-Key', a.apiKey)
      .send({ algorithm: 'RSA-2048' })
      .expect(403);
    await t.http().post(`/admin/tenants/${a.id}/signing-keys`).send({ algorithm: 'RSA-2048' }).expect(401);
    const missing = await rotate('00000000-0000-4000-8000-000000000000', 'RSA-2048').expect(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
    for (const algorithm of ['RSA-1024', 'ES256', '', undefined]) {
      const res = await rotate(a.id, algorithm as string).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    await rotate('not-a-uuid', 'RSA-2048').expect(400);
    const active = await t.ds.query(`SELECT count(*)::int AS n FROM signing_keys WHERE tenant_id = $1 AND is_active`, [
      a.id,
    ]);
    expect(active).toEqual([{ n: 1 }]);
  });

  it('serializes concurrent rotations: every one succeeds and exactly one key ends active', async () => {
    const tenant = await createTenant(t);
    const results = await Promise.all(['ECDSA-P256', 'RSA-2048', 'ECDSA-P256'].map((alg) => rotate(tenant.id, alg)));
    expect(results.map((r) => r.status)).toEqual([201, 201, 201]);
    const all = await rows(tenant.id);
    expect(all).toHaveLength(4);
    expect(all.filter((r) => r.is_active)).toHaveLength(1);
  });

  it('rolls the key back with the tenant when tenant creation fails', async () => {
    const before = await t.ds.query(`SELECT count(*)::int AS n FROM signing_keys`);
    await t.http().post('/admin/tenants').set('Authorization', admin()).send({ name: 'dup', slug: a.slug }).expect(409);
    expect(await t.ds.query(`SELECT count(*)::int AS n FROM signing_keys`)).toEqual(before);
  });
});
