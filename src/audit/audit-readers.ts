import type { Request } from 'express';
import type { AuthenticatedRequest } from '../auth/auth-context.js';

/**
 * Who is the caller of an audit query, and may they read the organization's trail: the core owns this
 * port and the managed deployment's accounts answer it (M4: a signed-in owner or admin). The query route
 * exists only where an implementation is provided.
 */
export abstract class AuditReaders {
  /** The tenant whose audit trail the request's caller may read; refuses (401, 403) anyone else. */
  abstract tenantOf(req: Request & AuthenticatedRequest): Promise<string>;
}
