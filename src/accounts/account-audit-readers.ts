import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AuditReaders } from '../audit/audit-readers.js';
import type { AuthenticatedRequest } from '../auth/auth-context.js';
import { AccountService } from './account.service.js';
import { callerOf } from './caller.decorator.js';

/** M4: the audit trail is read by a signed-in owner or admin of the organization, roles read from the database. */
@Injectable()
export class AccountAuditReaders extends AuditReaders {
  constructor(private readonly account: AccountService) {
    super();
  }

  async tenantOf(req: Request & AuthenticatedRequest): Promise<string> {
    const caller = callerOf(req);
    await this.account.manager(caller);
    return caller.tenantId;
  }
}
