import { createPrivateKey, createPublicKey } from 'node:crypto';
import { parseMeta } from '../rules/meta.js';
import { signManifest } from '../signature/jws.js';
import { algorithmOfKey, jwkThumbprint, publicKeyToJwk } from '../signature/keys.js';
import { manifestEntries, type SignatureManifest } from '../signature/manifest.js';
import { replaceEntryVerbatim } from '../signature/raw-zip.js';
import { openArchive } from '../zip/archive.js';
import { SIGNATURE_ENTRY } from '../zip/names.js';

/**
 * Signs an archive as signArchive does, with manifest fields replaced by `changes` whatever they hold
 * (signArchive refuses a bad `signed_at`): the signature verifies, the manifest is what a hostile or
 * broken signer wrote.
 */
export async function signWithManifest(
  archive: Buffer,
  privateKeyPem: string,
  changes: Partial<Record<keyof SignatureManifest, unknown>>,
): Promise<Buffer> {
  const privateKey = createPrivateKey(privateKeyPem);
  const publicKey = createPublicKey(privateKey);
  const keyId = jwkThumbprint(publicKey);
  const opened = await openArchive(archive);
  const meta = parseMeta(opened.files.get('meta.json'));
  const manifest = {
    sdf_sig_version: '1',
    document_id: meta.document_id,
    sdf_version: meta.sdf_version,
    algorithm: algorithmOfKey(privateKey),
    key_id: keyId,
    signed_at: '2026-03-15T13:30:00.000Z',
    entries: manifestEntries(
      opened.entries.map((e) => e.name),
      (name) => opened.files.get(name) ?? Buffer.alloc(0),
    ),
    ...changes,
  } as SignatureManifest;
  const jws = await signManifest(manifest, privateKey, publicKeyToJwk(publicKey, keyId));
  const content = Buffer.from(JSON.stringify(jws), 'utf8');
  return replaceEntryVerbatim(archive, opened.entries, SIGNATURE_ENTRY, content, new Date('2026-03-15T13:30:00Z'));
}
