import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditPartitionKeeper } from './audit-partitions.js';
import { AuditService } from './audit.service.js';
import { AuditLogEntry } from './entities/audit-log.entity.js';

/** The entities this module owns (also read by the migration data source). */
export const auditEntities = [AuditLogEntry];

@Global()
@Module({
  imports: [TypeOrmModule.forFeature(auditEntities)],
  providers: [AuditService, AuditPartitionKeeper],
  exports: [AuditService],
})
export class AuditModule {}
