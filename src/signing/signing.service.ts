import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { preparedQuery } from '../database/prepared.js';
import { AuditService } from '../audit/audit.service.js';
import type { TenantAuth } from '../auth/auth-context.js';
import { AppError } from '../common/errors.js';
import { DocumentsRepository } from '../documents/documents.repository.js';
import { requireValidated } from '../documents/documents.service.js';
import type { SdfDocument } from '../documents/entities/document.entity.js';
import { ValidationExtensions } from '../documents/validation-extensions.js';
import { ValidationPoolService } from '../documents/validation-pool.service.js';
import { publicJobId, QueueName } from '../queue/queues.js';
import type { VerifyResult } from '../sdf/index.js';
import { STORAGE_DRIVER, type StorageDriver } from '../storage/storage-driver.js';
import { enqueueSigning } from './jobs/sign-sdf.job.js';
import { SigningKeysService } from './signing-keys.service.js';
import { SigningThreadsService } from './signing-threads.service.js';

/** Who acts, for audit entries (S11). */
export interface SigningActor {
  auth: TenantAuth;
  ip: string | null;
}

export interface SignAccepted {
  id: string;
  status: string;
  job_id: string;
}

/** S3: why a document cannot be signed, in words a client can act on. */
function notSignable(doc: Pick<SdfDocument, 'status' | 'is_signed'>): string | null {
  if (doc.is_signed) return 'The document is already signed';
  switch (doc.status) {
    case 'valid':
      return null;
    case 'pending':
      return 'The document is still pending validation; only a valid document can be signed';
    case 'invalid':
      return 'The document failed validation; only a valid document can be signed';
    case 'signed':
      return 'The document is already signed';
  }
}

/** POST /sign/:id and POST /verify/:id; also supplies the tenant's keys to validation (F9 trust). */
@Injectable()
export class SigningService implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(STORAGE_DRIVER) private readonly storage: StorageDriver,
    @InjectQueue(QueueName.SignSdf) private readonly signQueue: Queue,
    private readonly documents: DocumentsRepository,
    private readonly audit: AuditService,
    private readonly keys: SigningKeysService,
    private readonly extensions: ValidationExtensions,
    private readonly pool: ValidationPoolService,
    private readonly threads: SigningThreadsService,
  ) {}

  /** F9/S3: a re-uploaded file signed with one of the tenant's keys (rotated ones included) is trusted. */
  onModuleInit(): void {
    this.extensions.useKeyLookup((tenantId) => this.keys.keyLookup(tenantId));
    // A produced file asked to be signed is signed before it is stored, with the tenant's active key, on
    // a signing thread (F9: the same signature as the signing job's; the private key stays in this process).
    this.extensions.useSigner(async (tenantId, path, output) => {
      const key = await this.keys.activeKeyForSigning(tenantId);
      await this.threads.signToFile(path, { privateKeyPem: key.privateKeyPem, keyId: key.keyId }, output);
      return { key_id: key.keyId, algorithm: key.algorithm };
    });
  }

  /**
   * Checks the document and the tenant's key and writes the audit entry in one statement (the row
   * locked while it runs, so a concurrent delete or sign request waits), then enqueues after it (S9).
   * The job id is the document id: a repeated request finds the same job and the file is signed once.
   */
  async requestSign(actor: SigningActor, id: string): Promise<SignAccepted> {
    const tenantId = actor.auth.tenantId;
    const [found] = await preparedQuery<
      Pick<SdfDocument, 'id' | 'tenant_id' | 'status' | 'is_signed'> & { key_id: string | null }
    >(
      this.ds,
      'sdf_sign_request',
      `WITH d AS (
         SELECT id, tenant_id, document_id, status, is_signed FROM documents WHERE tenant_id = $1 AND id = $2 FOR UPDATE
       ), k AS (
         SELECT key_id, algorithm FROM signing_keys WHERE tenant_id = $1 AND is_active LIMIT 1
       ), a AS (
         INSERT INTO audit_log (tenant_id, action, resource_id, actor, ip_address, metadata)
           SELECT d.tenant_id, 'sign', d.id, $3, $4,
                  jsonb_build_object('key_id', k.key_id, 'algorithm', k.algorithm, 'document_id', d.document_id)
             FROM d, k WHERE d.status = 'valid' AND NOT d.is_signed
       )
       SELECT d.id, d.tenant_id, d.status, d.is_signed, k.key_id FROM d LEFT JOIN k ON true`,
      [tenantId, id, actor.auth.actor, actor.ip],
    );
    if (!found) throw AppError.notFound('Document');
    const refusal = notSignable(found);
    if (refusal) throw AppError.invalidState(refusal);
    if (!found.key_id) {
      throw AppError.invalidState(
        'The tenant has no active signing key; an operator creates one with POST /admin/tenants/:tenantId/signing-keys',
      );
    }
    const doc = found;
    const jobId = await enqueueSigning(this.signQueue, doc);
    return { id: doc.id, status: doc.status, job_id: publicJobId(QueueName.SignSdf, jobId) };
  }

  /**
   * F9 verification of the stored file against the tenant's keys, rotated ones included; audited
   * (S11). An unsigned or unreadable file is an answer (`valid: false` with the reason), not an error.
   * Only a validated document is verified: a pending or invalid one is 409 INVALID_STATE.
   */
  async verify(actor: SigningActor, id: string): Promise<VerifyResult> {
    const tenantId = actor.auth.tenantId;
    const doc = await this.documents.findForTenant(tenantId, id);
    if (!doc) throw AppError.notFound('Document');
    requireValidated(doc, 'verification');
    // The archive is inflated and hashed in the validation pool, never on the API's event loop.
    const result = await this.pool.verify(tenantId, await this.storage.getBuffer(doc.storage_key));
    await this.ds.transaction((m) =>
      this.audit.record(m, {
        tenantId,
        action: 'verify',
        actor: actor.auth.actor,
        resourceId: doc.id,
        ipAddress: actor.ip,
        metadata: { valid: result.valid, trusted: result.trusted, key_id: result.key_id, algorithm: result.algorithm },
      }),
    );
    return result;
  }
}
