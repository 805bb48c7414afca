import { createPrivateKey, createPublicKey } from 'node:crypto';
import { canonicalJson } from '../schema/canonical.js';
import { generateKeyPair, publicKeyToJwk, type SignatureAlgorithm } from '../signature/keys.js';
import { signArchive } from '../signature/sign.js';
import { openArchive } from '../zip/archive.js';
import { invoiceData, invoiceMeta, INVOICE_SCHEMA } from './build-sdf.js';
import { blankPdf } from './pdf-builder.js';
import { buildZip } from './zip-builder.js';

/**
 * F9: the published test vectors. A fixed archive (stored entries, fixed dates, so its bytes do not
 * depend on a Deflate implementation), signed with fixed keys at a fixed time, plus the expected
 * manifest bytes and the expected outcome of verifying each file.
 */
export const VECTOR_SIGNED_AT = '2026-03-15T13:30:00.000Z';

export const VECTOR_KEYS = {
  es256: { algorithm: 'ECDSA-P256', kid: 'sdf-test-vector-es256' },
  rs256: { algorithm: 'RSA-2048', kid: 'sdf-test-vector-rs256' },
} as const satisfies Record<string, { algorithm: SignatureAlgorithm; kid: string }>;

export type VectorKeyName = keyof typeof VECTOR_KEYS;
/** Private keys (PKCS#8 PEM) by vector key name. */
export type VectorPrivateKeys = Record<VectorKeyName, string>;

export interface VectorCase {
  file: string;
  /** A JWK set file whose keys the verifier trusts; absent: only the embedded key. */
  trusted_keys?: string;
  /** The verification result (F9), when the signature is valid. */
  expect?: { valid: true; algorithm: SignatureAlgorithm; key_id: string; signed_at: string; trusted: boolean };
  /** The error code of validate(), and the reason verification gives, when it is not. */
  expect_error?: { code: 'SDF_ERROR_INVALID_SIGNATURE'; reason: string };
}

const json = (value: unknown): Buffer => Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');

/** The fixed unsigned archive: the reference invoice with a vendor file, every entry stored. */
export function vectorArchive(): Buffer {
  return buildZip([
    { name: 'visual.pdf', data: blankPdf(), method: 0 },
    { name: 'data.json', data: json(invoiceData()), method: 0 },
    { name: 'schema.json', data: json(INVOICE_SCHEMA), method: 0 },
    { name: 'meta.json', data: json(invoiceMeta()), method: 0 },
    { name: 'vendor/notes.txt', data: Buffer.from('Test vector for the SDF signature (F9).\n'), method: 0 },
  ]);
}

export function newVectorKeys(): VectorPrivateKeys {
  return {
    es256: generateKeyPair(VECTOR_KEYS.es256.algorithm).privateKeyPem,
    rs256: generateKeyPair(VECTOR_KEYS.rs256.algorithm).privateKeyPem,
  };
}

/** Decodes the manifest payload of a signed archive: the exact RFC 8785 bytes that were signed. */
export async function signedPayload(archive: Buffer): Promise<Buffer> {
  const { files } = await openArchive(archive);
  const jws = JSON.parse(files.get('signature.sig')!.toString('utf8')) as { payload: string };
  return Buffer.from(jws.payload, 'base64url');
}

/** Rebuilds a signed archive (stored entries) after a change to its inflated entries. */
async function tamper(archive: Buffer, change: (files: Map<string, Buffer>) => void): Promise<Buffer> {
  const { files } = await openArchive(archive);
  change(files);
  return buildZip([...files].map(([name, data]) => ({ name, data, method: 0 })));
}

/** Every vector file by its path under the vectors folder. */
export async function buildVectors(keys: VectorPrivateKeys): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const unsigned = vectorArchive();
  out.set('unsigned.sdf', unsigned);
  const trusted: Record<VectorKeyName, string> = {
    es256: 'keys/es256-public.jwks.json',
    rs256: 'keys/rs256-public.jwks.json',
  };
  const cases: VectorCase[] = [];
  const signed = {} as Record<VectorKeyName, Buffer>;
  for (const name of Object.keys(VECTOR_KEYS) as VectorKeyName[]) {
    const { algorithm, kid } = VECTOR_KEYS[name];
    const privateKey = createPrivateKey(keys[name]);
    const publicKey = createPublicKey(privateKey);
    out.set(`keys/${name}-private.pem`, Buffer.from(keys[name]));
    out.set(`keys/${name}-public.pem`, Buffer.from(publicKey.export({ type: 'spki', format: 'pem' }).toString()));
    out.set(trusted[name], json({ keys: [publicKeyToJwk(publicKey, kid)] }));
    signed[name] = await signArchive(unsigned, { privateKeyPem: keys[name], keyId: kid, signedAt: VECTOR_SIGNED_AT });
    out.set(`${name}-signed.sdf`, signed[name]);
    out.set(`${name}-manifest.jcs.json`, await signedPayload(signed[name]));
    const valid = { valid: true, algorithm, key_id: kid, signed_at: VECTOR_SIGNED_AT } as const;
    cases.push(
      { file: `${name}-signed.sdf`, trusted_keys: trusted[name], expect: { ...valid, trusted: true } },
      { file: `${name}-signed.sdf`, expect: { ...valid, trusted: false } },
    );
  }
  // RS256 (PKCS#1 v1.5) is deterministic: these are the exact bytes any implementation must produce.
  const { files } = await openArchive(signed.rs256);
  out.set('rs256-signature.sig', files.get('signature.sig')!);

  out.set(
    'es256-tampered.sdf',
    await tamper(signed.es256, (f) =>
      f.set('data.json', Buffer.from(f.get('data.json')!.toString().replace('1713.60', '9713.60'))),
    ),
  );
  out.set('rs256-tampered.sdf', await tamper(signed.rs256, (f) => f.set('vendor/added.txt', Buffer.from('added\n'))));
  // A trusted key set that names the RS256 kid with another key: the file claims a key it was not signed with.
  const impostor = publicKeyToJwk(createPublicKey(createPrivateKey(keys.es256)), VECTOR_KEYS.rs256.kid);
  out.set('keys/impostor.jwks.json', json({ keys: [impostor] }));
  cases.push(
    {
      file: 'es256-tampered.sdf',
      expect_error: { code: 'SDF_ERROR_INVALID_SIGNATURE', reason: 'entry data.json was changed after signing' },
    },
    {
      file: 'rs256-tampered.sdf',
      expect_error: { code: 'SDF_ERROR_INVALID_SIGNATURE', reason: 'entry vendor/added.txt was added after signing' },
    },
    {
      file: 'rs256-signed.sdf',
      trusted_keys: 'keys/impostor.jwks.json',
      expect_error: {
        code: 'SDF_ERROR_INVALID_SIGNATURE',
        reason: `the signature does not verify with the trusted key ${VECTOR_KEYS.rs256.kid}`,
      },
    },
  );
  out.set('expected.json', json({ signed_at: VECTOR_SIGNED_AT, cases }));
  return out;
}

/** The canonical form check a reader of the vectors can repeat: the payload is its own RFC 8785 form. */
export function isCanonical(payload: Buffer): boolean {
  return canonicalJson(JSON.parse(payload.toString('utf8'))) === payload.toString('utf8');
}
