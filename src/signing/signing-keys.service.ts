import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { preparedQuery } from '../database/prepared.js';
import { AuditService } from '../audit/audit.service.js';
import { CryptoBox } from '../common/crypto-box.js';
import { AppError } from '../common/errors.js';
import { generateKeyPair, type KeyLookup, type PublicKeyInfo, type SignatureAlgorithm } from '../sdf/index.js';
import { Tenant } from '../tenants/entities/tenant.entity.js';
import { SigningKey, type SealedSigningKey } from './entities/signing-key.entity.js';

/** What the signing job needs: the decrypted private key of the tenant's active key. */
export interface ActiveSigningKey {
  keyId: string;
  algorithm: SignatureAlgorithm;
  privateKeyPem: string;
}

/** What a key lookup answers (the format core's `PublicKeyInfo`, plus facts for callers that want them). */
export interface TenantPublicKey extends PublicKeyInfo {
  publicKey: string;
  keyId: string;
  algorithm: SignatureAlgorithm;
  isActive: boolean;
}

export interface KeyActor {
  actor: string;
  ip: string | null;
}

/**
 * S7: the sealed private key is bound to its tenant and key id, so a ciphertext copied into another
 * row (another tenant's) does not decrypt. Master-key rotation reseals with the same associated data.
 */
export function privateKeyAssociatedData(row: Pick<SigningKey, 'tenant_id' | 'key_id'>): string {
  return `signing_key:${row.tenant_id}:${row.key_id}`;
}

/** S8: per-tenant signing keys: creation with the tenant, rotation, publication and use. */
@Injectable()
export class SigningKeysService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly box: CryptoBox,
    private readonly audit: AuditService,
  ) {}

  /** S8: every tenant gets an ECDSA-P256 key at creation; runs inside the tenant-creation transaction. */
  async createInitialKey(m: EntityManager, tenantId: string): Promise<SigningKey> {
    return this.insertKey(m, tenantId, 'ECDSA-P256');
  }

  /**
   * S8 rotation: the new key becomes the active one; earlier keys stay, inactive, so signatures made
   * with them still verify and stay trusted (F9). Audited with the previous key ids.
   */
  async rotate(tenantId: string, algorithm: SignatureAlgorithm, by: KeyActor): Promise<SigningKey> {
    return this.ds.transaction(async (m) => {
      // Serializes concurrent rotations of one tenant; the partial unique index backs this up.
      const tenant = await m.findOne(Tenant, { where: { id: tenantId }, lock: { mode: 'pessimistic_write' } });
      if (!tenant) throw AppError.notFound('Tenant');
      const previous = await m.find(SigningKey, { where: { tenant_id: tenantId, is_active: true } });
      await m.update(SigningKey, { tenant_id: tenantId, is_active: true }, { is_active: false });
      const key = await this.insertKey(m, tenantId, algorithm);
      await this.audit.record(m, {
        tenantId,
        action: 'signing_key.rotate',
        actor: by.actor,
        ipAddress: by.ip,
        resourceId: key.key_id,
        metadata: { key_id: key.key_id, algorithm, deactivated_key_ids: previous.map((k) => k.key_id) },
      });
      return key;
    });
  }

  /** The tenant's keys, active and rotated, newest first. */
  listForTenant(tenantId: string): Promise<SigningKey[]> {
    return this.ds.manager.find(SigningKey, {
      where: { tenant_id: tenantId },
      order: { created_at: 'DESC', id: 'DESC' },
    });
  }

  /** Public keys for the JWKS of a tenant slug; an unknown slug is 404. */
  async listForSlug(slug: string): Promise<SigningKey[]> {
    const tenant = await this.ds.manager.findOne(Tenant, { where: { slug }, select: { id: true } });
    if (!tenant) throw AppError.notFound('Tenant');
    return this.listForTenant(tenant.id);
  }

  /**
   * The active key with its private half decrypted, for signing only; never logged, never returned by
   * the API. (The signing job reads it beside its document and unseals it with `unseal`.)
   */
  async activeKeyForSigning(tenantId: string, m: EntityManager = this.ds.manager): Promise<ActiveSigningKey> {
    const [row] = await preparedQuery<SealedSigningKey>(
      this.ds,
      'sdf_active_signing_key',
      `SELECT tenant_id, key_id, algorithm, private_key_enc FROM signing_keys WHERE tenant_id = $1 AND is_active LIMIT 1`,
      [tenantId],
      m,
    );
    return this.unseal(row ?? null);
  }

  /** What signing without an active key answers (409). */
  refusalWithoutKey(): AppError {
    return AppError.invalidState(
      'The tenant has no active signing key; create one with POST /admin/tenants/:tenantId/signing-keys',
    );
  }

  /** The active key read beside other columns (the signing job's one statement), unsealed; none is 409. */
  unseal(row: SealedSigningKey | null): ActiveSigningKey {
    if (!row) throw this.refusalWithoutKey();
    return {
      keyId: row.key_id,
      algorithm: row.algorithm,
      privateKeyPem: this.box.decryptString(row.private_key_enc, privateKeyAssociatedData(row)),
    };
  }

  /**
   * F9 trust: a lookup over this tenant's keys, rotated ones included, in the shape the format core's
   * `verifyArchive` / `validate` take as `keyLookup`. Another tenant's key id answers `undefined`.
   */
  keyLookup(tenantId: string): KeyLookup & ((kid: string) => Promise<TenantPublicKey | undefined>) {
    return async (kid: string) => {
      const row = await this.ds.manager.findOne(SigningKey, { where: { tenant_id: tenantId, key_id: kid } });
      if (!row) return undefined;
      return { publicKey: row.public_key, keyId: row.key_id, algorithm: row.algorithm, isActive: row.is_active };
    };
  }

  private async insertKey(m: EntityManager, tenantId: string, algorithm: SignatureAlgorithm): Promise<SigningKey> {
    const pair = generateKeyPair(algorithm);
    const row = m.create(SigningKey, {
      tenant_id: tenantId,
      algorithm,
      public_key: pair.publicKeyPem,
      key_id: pair.keyId,
      is_active: true,
    });
    row.private_key_enc = this.box.encrypt(pair.privateKeyPem, privateKeyAssociatedData(row));
    return m.save(row);
  }
}
