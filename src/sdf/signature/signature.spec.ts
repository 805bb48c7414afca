import { createPrivateKey, createPublicKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openArchive } from '../zip/archive.js';
import { buildZip } from '../testing/zip-builder.js';
import { buildSdf } from '../testing/build-sdf.js';
import { signWithManifest } from '../testing/sign-manifest.js';
import { validate } from '../validate.js';
import { generateKeyPair, jwkThumbprint, jwkToPublicKey, publicKeyToJwk, type SignatureAlgorithm } from './keys.js';
import { signArchive } from './sign.js';
import { verifyArchive } from './verify.js';

const ec = generateKeyPair('ECDSA-P256');
const rsa = generateKeyPair('RSA-2048');
const other = generateKeyPair('ECDSA-P256');

async function signed(
  key = ec,
  sdf = buildSdf({ extra: [{ name: 'vendor/x.txt', data: Buffer.from('x') }] }),
): Promise<Buffer> {
  return signArchive(sdf, { privateKeyPem: key.privateKeyPem, keyId: key.keyId, signedAt: '2026-03-15T13:30:00.000Z' });
}

/** Rebuilds an archive from its inflated entries, with one change applied. */
async function rewrite(archive: Buffer, change: (files: Map<string, Buffer>) => void): Promise<Buffer> {
  const { files } = await openArchive(archive);
  change(files);
  return buildZip([...files].map(([name, data]) => ({ name, data })));
}

describe('signatures (F9)', () => {
  it('signs with a parsed key exactly as with its PEM; refuses a public key and no key at all', async () => {
    const sdf = buildSdf();
    const options = { keyId: rsa.keyId, signedAt: '2026-03-15T13:30:00.000Z' };
    // RS256 is deterministic: the same bytes prove the same key, header and manifest.
    const fromPem = await signArchive(sdf, { ...options, privateKeyPem: rsa.privateKeyPem });
    const fromKey = await signArchive(sdf, { ...options, privateKey: createPrivateKey(rsa.privateKeyPem) });
    expect(fromKey.equals(fromPem)).toBe(true);
    await expect(signArchive(sdf, { ...options, privateKey: createPublicKey(rsa.publicKeyPem) })).rejects.toThrow(
      /not a private key/,
    );
    await expect(signArchive(sdf, options)).rejects.toThrow(/privateKeyPem or privateKey/);
  });

  it.each<[SignatureAlgorithm, typeof ec]>([
    ['ECDSA-P256', ec],
    ['RSA-2048', rsa],
  ])('round-trips %s, trusted when the tenant key answers the kid', async (algorithm, key) => {
    const archive = await signed(key);
    const lookup = (kid: string) => (kid === key.keyId ? { publicKey: key.publicKeyPem } : undefined);
    expect(await verifyArchive(archive, { keyLookup: lookup })).toEqual({
      valid: true,
      algorithm,
      key_id: key.keyId,
      signed_at: '2026-03-15T13:30:00.000Z',
      trusted: true,
    });
    const result = await validate(archive, { keyLookup: lookup });
    expect(result).toMatchObject({ valid: true, is_signed: true, checks: { signature: 'pass' } });
  });

  it('is valid but untrusted with only the embedded key', async () => {
    const archive = await signed();
    expect(await verifyArchive(archive)).toMatchObject({ valid: true, trusted: false });
    const result = await validate(archive, { keyLookup: () => undefined });
    expect(result.valid).toBe(true);
    expect(result.warnings.some((w) => w.includes('not a trusted key'))).toBe(true);
  });

  it('never changes another entry, and re-signing replaces signature.sig deterministically', async () => {
    const original = buildSdf();
    const once = await signed(rsa, original);
    const before = await openArchive(original);
    const after = await openArchive(once);
    for (const [name, bytes] of before.files) expect(after.files.get(name)?.equals(bytes)).toBe(true);
    expect(original.subarray(0, before.centralOffset).equals(once.subarray(0, before.centralOffset))).toBe(true);
    const twice = await signed(rsa, once);
    expect(twice.equals(once)).toBe(true); // RS256 (PKCS#1 v1.5) is deterministic
  });

  it.each(['visual.pdf', 'data.json', 'schema.json', 'meta.json', 'vendor/x.txt'])(
    'rejects an archive whose %s changed after signing',
    async (name) => {
      const archive = await rewrite(await signed(), (files) => {
        const bytes = files.get(name)!;
        files.set(
          name,
          name.endsWith('.json')
            ? Buffer.from(bytes.toString().replace('}', ' }'))
            : Buffer.concat([bytes, Buffer.from('\n')]),
        );
      });
      expect(await verifyArchive(archive)).toMatchObject({
        valid: false,
        reason: `entry ${name} was changed after signing`,
      });
      expect((await validate(archive)).error?.code).toBe('SDF_ERROR_INVALID_SIGNATURE');
    },
  );

  it('rejects an entry added or removed after signing', async () => {
    const added = await rewrite(await signed(), (files) => files.set('vendor/new.txt', Buffer.from('n')));
    expect((await validate(added)).error?.code).toBe('SDF_ERROR_INVALID_SIGNATURE');
    const removed = await rewrite(await signed(), (files) => files.delete('vendor/x.txt'));
    expect(await verifyArchive(removed)).toMatchObject({
      valid: false,
      reason: 'entry vendor/x.txt was removed after signing',
    });
    expect((await validate(removed)).error?.code).toBe('SDF_ERROR_INVALID_SIGNATURE');
  });

  it('rejects a wrong key: tenant key under the kid that did not sign, or an embedded key that did not', async () => {
    const archive = await signed(ec);
    const result = await validate(archive, { keyLookup: () => ({ publicKey: other.publicJwk }) });
    expect(result.error?.code).toBe('SDF_ERROR_INVALID_SIGNATURE');
    const swapped = await rewrite(archive, (files) => {
      const jws = JSON.parse(files.get('signature.sig')!.toString()) as { protected: string };
      const header = JSON.parse(Buffer.from(jws.protected, 'base64url').toString()) as Record<string, unknown>;
      header.jwk = publicKeyToJwk(other.publicKeyPem, ec.keyId);
      jws.protected = Buffer.from(JSON.stringify(header)).toString('base64url');
      files.set('signature.sig', Buffer.from(JSON.stringify(jws)));
    });
    expect(await verifyArchive(swapped)).toMatchObject({ valid: false });
    expect((await validate(swapped)).error?.code).toBe('SDF_ERROR_INVALID_SIGNATURE');
  });

  it.each<[string, unknown]>([
    ['markup', '<b>x</b>'],
    ['a date without an offset', '2026-03-15T13:30:00'],
    ['a date that does not exist', '2026-02-30T13:30:00Z'],
    ['a number', 1773581400],
    ['nothing', undefined],
  ])('fails a signature whose signed_at is %s, though the key verifies it', async (_label, signedAt) => {
    const archive = await signWithManifest(buildSdf(), ec.privateKeyPem, { signed_at: signedAt });
    const reason = 'signature.sig: signed_at must be an RFC 3339 date-time with a timezone offset';
    expect(await verifyArchive(archive)).toEqual({
      valid: false,
      algorithm: null,
      key_id: null,
      signed_at: null,
      trusted: false,
      reason,
    });
    const result = await validate(archive);
    expect(result).toMatchObject({ valid: false, checks: { pdf: 'pass', signature: 'fail' } });
    expect(result.error).toEqual({
      code: 'SDF_ERROR_INVALID_SIGNATURE',
      message: `signature.sig does not verify: ${reason}`,
      file: 'signature.sig',
      details: [{ path: '', message: `signature.sig does not verify: ${reason}` }],
    });
    // The same manifest with a date verifies: only signed_at made the difference.
    const dated = await signWithManifest(buildSdf(), ec.privateKeyPem, {});
    expect(await verifyArchive(dated)).toMatchObject({ valid: true, signed_at: '2026-03-15T13:30:00.000Z' });
  });

  it('refuses to sign with a signed_at that is not an RFC 3339 date-time', async () => {
    await expect(signArchive(buildSdf(), { privateKeyPem: ec.privateKeyPem, signedAt: '<b>x</b>' })).rejects.toThrow(
      /signedAt must be an RFC 3339 date-time/,
    );
    const leap = await signArchive(buildSdf(), { privateKeyPem: ec.privateKeyPem, signedAt: '2016-12-31T23:59:60Z' });
    expect(await verifyArchive(leap)).toMatchObject({ valid: true, signed_at: '2016-12-31T23:59:60Z' });
  });

  it('imports and exports keys as PEM and JWK', () => {
    const key = jwkToPublicKey(ec.publicJwk);
    expect(key.export({ type: 'spki', format: 'pem' })).toBe(ec.publicKeyPem);
    expect(publicKeyToJwk(rsa.publicKeyPem, 'k1')).toMatchObject({ kty: 'RSA', alg: 'RS256', kid: 'k1', use: 'sig' });
    expect(ec.publicJwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', kid: ec.keyId });
  });
});

describe('JWK thumbprints (RFC 7638)', () => {
  it("equal jose's for EC and RSA keys", async () => {
    const { calculateJwkThumbprint } = await import('jose');
    const { createPublicKey } = await import('node:crypto');
    for (const pair of [ec, rsa, other]) {
      const key = createPublicKey(pair.publicKeyPem);
      expect(jwkThumbprint(key)).toBe(await calculateJwkThumbprint(key.export({ format: 'jwk' }) as never, 'sha256'));
    }
  });
});
