import { StorageNotFoundError, type StorageDriver } from '../../storage/storage-driver.js';
import type { DocumentsRepository } from '../documents.repository.js';
import type { SdfDocument } from '../entities/document.entity.js';

/**
 * The stored bytes a job works on, or null when the document was deleted while its job was queued
 * (nothing left to do). Any other storage fault is thrown, so the job's attempts retry it (S9).
 */
export async function loadStoredFileForJob(
  storage: StorageDriver,
  documents: DocumentsRepository,
  doc: SdfDocument,
): Promise<Buffer | null> {
  try {
    return await storage.getBuffer(doc.storage_key);
  } catch (err) {
    if (err instanceof StorageNotFoundError && !(await documents.findForTenant(doc.tenant_id, doc.id))) return null;
    throw err;
  }
}
