import { StorageNotFoundError, type StorageDriver } from '../../storage/storage-driver.js';
import type { DocumentsRepository } from '../documents.repository.js';
import type { SdfDocument } from '../entities/document.entity.js';

/** What finding a record's stored file takes. */
type StoredRecord = Pick<SdfDocument, 'id' | 'tenant_id' | 'storage_key'>;

/**
 * The stored bytes a job works on, or null when the document was deleted while its job was queued
 * (nothing left to do). Any other storage fault is thrown, so the job's attempts retry it (S9).
 */
export async function loadStoredFileForJob(
  storage: StorageDriver,
  documents: DocumentsRepository,
  doc: StoredRecord,
): Promise<Buffer | null> {
  try {
    return await storage.getBuffer(doc.storage_key);
  } catch (err) {
    if (err instanceof StorageNotFoundError && !(await documents.findForTenant(doc.tenant_id, doc.id))) return null;
    throw err;
  }
}

/**
 * What the validation pool should read: the stored file's path when the store is this machine's disk
 * (the pool process reads it, nothing passes through this process's heap), else its bytes; null when
 * the document is gone. A path is not checked here: `missingAfterFailure` tells, once the pool failed,
 * whether the file had vanished.
 */
export async function storedInputForJob(
  storage: StorageDriver,
  documents: DocumentsRepository,
  doc: StoredRecord,
): Promise<Buffer | string | null> {
  if (storage.localPath) return storage.localPath(doc.storage_key);
  return loadStoredFileForJob(storage, documents, doc);
}

/**
 * After the pool failed on a stored path: 'gone' when the file and its document were deleted meanwhile
 * (nothing left to do); a StorageNotFoundError (retried) when the file is missing but the record is not;
 * false when the file is there, so the failure is the content's.
 */
export async function missingAfterFailure(
  storage: StorageDriver,
  documents: DocumentsRepository,
  doc: StoredRecord,
): Promise<'gone' | false> {
  if (await storage.exists(doc.storage_key)) return false;
  if (!(await documents.findForTenant(doc.tenant_id, doc.id))) return 'gone';
  throw new StorageNotFoundError(doc.storage_key);
}
