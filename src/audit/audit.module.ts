import { Global, Module } from '@nestjs/common';
import { AuditPartitionKeeper } from './audit-partitions.js';
import { AuditService } from './audit.service.js';

@Global()
@Module({ providers: [AuditService, AuditPartitionKeeper], exports: [AuditService] })
export class AuditModule {}
