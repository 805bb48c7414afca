import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SdfError } from '../errors.js';
import { buildSdf } from '../testing/build-sdf.js';
import { generateKeyPair } from './keys.js';
import { signArchive } from './sign.js';
import { createSignThreads } from './sign-threads.js';
import { verifyArchive } from './verify.js';

const rsa = generateKeyPair('RSA-2048');
const ec = generateKeyPair('ECDSA-P256');
const signedAt = '2026-03-15T13:30:00.000Z';

describe('signing threads', () => {
  const threads = createSignThreads(2);
  afterAll(() => threads.destroy());

  it('gives the bytes signArchive() gives (RS256 is deterministic)', async () => {
    const archive = buildSdf();
    const options = { privateKeyPem: rsa.privateKeyPem, keyId: rsa.keyId, signedAt };
    const expected = await signArchive(archive, options);
    expect((await threads.sign(archive, options)).equals(expected)).toBe(true);
  });

  it('signs many files at once, each verifiable, across the threads', async () => {
    const files = Array.from({ length: 12 }, () => buildSdf());
    const signed = await Promise.all(
      files.map((f) => threads.sign(f, { privateKeyPem: ec.privateKeyPem, keyId: ec.keyId })),
    );
    const lookup = (kid: string) => (kid === ec.keyId ? { publicKey: ec.publicKeyPem } : undefined);
    for (const archive of signed) {
      expect(await verifyArchive(archive, { keyLookup: lookup })).toMatchObject({ valid: true, trusted: true });
    }
  });

  it('passes the format core’s errors on as SdfError with their code, and keeps serving', async () => {
    const refused = threads.sign(buildSdf(), { privateKeyPem: ec.privateKeyPem, algorithm: 'RSA-2048' });
    await expect(refused).rejects.toBeInstanceOf(SdfError);
    await expect(refused).rejects.toMatchObject({ code: 'SDF_ERROR_INVALID_SIGNATURE' });
    await expect(threads.sign(Buffer.from('not a zip'), { privateKeyPem: ec.privateKeyPem })).rejects.toBeInstanceOf(
      SdfError,
    );
    const archive = await threads.sign(buildSdf(), { privateKeyPem: ec.privateKeyPem });
    expect(archive.length).toBeGreaterThan(0);
  });

  it('reads the file at a path and writes the signed one to a new, private, complete file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdf-sign-threads-'));
    try {
      const archive = buildSdf();
      const input = join(dir, 'in.sdf');
      writeFileSync(input, archive);
      const options = { privateKeyPem: rsa.privateKeyPem, keyId: rsa.keyId, signedAt };
      const expected = await signArchive(archive, options);
      // The output's folder does not exist yet: the thread makes it.
      const output = join(dir, 'spool', 'out.signed');
      expect(await threads.signToFile(input, options, output)).toEqual({ size: expected.length });
      expect(readFileSync(output).equals(expected)).toBe(true);
      expect(statSync(output).mode & 0o777).toBe(0o600);
      // From bytes too, and the same bytes from a path.
      expect((await threads.sign(input, options)).equals(expected)).toBe(true);

      // Never over an existing file, and a missing input is an error, not an empty signature.
      // A file call's failure keeps its code and call, so the service can tell a full or read-only disk.
      await expect(threads.signToFile(input, options, output)).rejects.toMatchObject({
        message: expect.stringMatching(/EEXIST/),
        code: 'EEXIST',
        syscall: 'open',
      });
      await expect(threads.signToFile(join(dir, 'gone.sdf'), options, join(dir, 'x'))).rejects.toThrow(/ENOENT/);
      expect(() => statSync(join(dir, 'x'))).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps each key parsed, and signs with every key it is given, not the last one it parsed', async () => {
    const keys = Array.from({ length: 3 }, () => generateKeyPair('ECDSA-P256'));
    const lookup = (kid: string) => {
      const key = keys.find((k) => k.keyId === kid);
      return key ? { publicKey: key.publicKeyPem } : undefined;
    };
    for (let round = 0; round < 2; round++) {
      for (const key of keys) {
        const signed = await threads.sign(buildSdf(), { privateKeyPem: key.privateKeyPem, keyId: key.keyId });
        expect(await verifyArchive(signed, { keyLookup: lookup })).toMatchObject({
          valid: true,
          trusted: true,
          key_id: key.keyId,
        });
      }
    }
  });

  it('refuses work once destroyed', async () => {
    const closing = createSignThreads(1);
    await closing.sign(buildSdf(), { privateKeyPem: ec.privateKeyPem });
    await closing.destroy();
    await expect(closing.sign(buildSdf(), { privateKeyPem: ec.privateKeyPem })).rejects.toThrow(/closed/);
  });
});
