import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

const MASTER_KEY_CHECK_LABEL = 'sdf master key check v1';

/**
 * S7: secrets at rest (signing keys, TOTP secrets, connector credentials, webhook secrets) are
 * AES-256-GCM under a master key. The stored form names the master key's id so the key can rotate:
 * `v<keyId>.<iv>.<tag>.<ciphertext>`, parts base64url.
 */
export class CryptoBox {
  private readonly hashKeys = new Map<string, Buffer>();

  constructor(
    private readonly keys: ReadonlyMap<string, Buffer>,
    readonly currentKeyId: string,
  ) {
    if (!keys.has(currentKeyId)) throw new Error(`master key ${currentKeyId} is not configured`);
  }

  encrypt(plaintext: string | Buffer, associatedData?: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentKeyId)!, iv);
    if (associatedData) cipher.setAAD(Buffer.from(associatedData));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return ['v' + this.currentKeyId, iv, cipher.getAuthTag(), ciphertext]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  decrypt(sealed: string, associatedData?: string): Buffer {
    const parts = sealed.split('.');
    if (parts.length !== 4 || !parts[0].startsWith('v')) throw new Error('not a sealed value');
    const key = this.keys.get(parts[0].slice(1));
    if (!key) throw new Error(`master key ${parts[0].slice(1)} is not configured`);
    const [iv, tag, ciphertext] = parts.slice(1).map((p) => Buffer.from(p, 'base64url'));
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    if (associatedData) decipher.setAAD(Buffer.from(associatedData));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  }

  decryptString(sealed: string, associatedData?: string): string {
    return this.decrypt(sealed, associatedData).toString('utf8');
  }

  /** The id of the master key a sealed value was made with (rotation finds the stale ones). */
  static keyIdOf(sealed: string): string {
    return sealed.slice(1, sealed.indexOf('.'));
  }

  needsRotation(sealed: string): boolean {
    return CryptoBox.keyIdOf(sealed) !== this.currentKeyId;
  }

  /** Re-encrypts under the current master key. */
  reseal(sealed: string, associatedData?: string): string {
    return this.encrypt(this.decrypt(sealed, associatedData), associatedData);
  }

  /**
   * S7: a keyed hash (HMAC-SHA-256) of a secret that may be guessable (a webhook secret chosen by a
   * person). A plain or salted hash in a database dump lets weak secrets be tried offline; this one
   * cannot be checked without the master key. The HMAC key is derived with HKDF from the current
   * master key and `purpose` (one key per use, never the encryption key itself). The stored form names
   * the master key's id, `v<keyId>.<hex>`, like a sealed value, so rotation finds the stale ones.
   */
  keyedHash(purpose: string, value: string | Buffer): string {
    return (
      `v${this.currentKeyId}.` +
      createHmac('sha256', this.hashKey(purpose, this.currentKeyId)).update(value).digest('hex')
    );
  }

  /** Whether a stored keyed hash was made under another master key than the current one (or is no keyed hash). */
  keyedHashIsStale(stored: string | null): boolean {
    return stored === null || !stored.startsWith(`v${this.currentKeyId}.`);
  }

  /** The ids of the configured master keys, the current one first. */
  get keyIds(): string[] {
    return [this.currentKeyId, ...[...this.keys.keys()].filter((id) => id !== this.currentKeyId)];
  }

  /**
   * S7: the check value of a configured master key, HMAC-SHA-256 of a fixed label under it (hex). Stored
   * beside the sealed data (master_key_checks), it tells whether a process holds the key the data was
   * sealed with, without revealing the key.
   */
  checkValue(keyId: string = this.currentKeyId): string {
    const key = this.keys.get(keyId);
    if (!key) throw new Error(`master key ${keyId} is not configured`);
    return createHmac('sha256', key).update(MASTER_KEY_CHECK_LABEL).digest('hex');
  }

  private hashKey(purpose: string, keyId: string): Buffer {
    const cacheKey = `${keyId} ${purpose}`;
    let key = this.hashKeys.get(cacheKey);
    if (!key) {
      // Fixed info label: a derived key for one purpose is useless for any other, and for encryption.
      key = Buffer.from(hkdfSync('sha256', this.keys.get(keyId)!, Buffer.alloc(0), `sdf keyed-hash v1 ${purpose}`, 32));
      this.hashKeys.set(cacheKey, key);
    }
    return key;
  }
}
