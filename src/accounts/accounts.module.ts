import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminModule } from '../admin/admin.module.js';
import { AuditReaders } from '../audit/audit-readers.js';
import { AuditQueryController } from '../audit/audit-query.controller.js';
import { AuditQueryService } from '../audit/audit-query.service.js';
import { AuthModule } from '../auth/auth.module.js';
import { AccountAuditReaders } from './account-audit-readers.js';
import { AccountController, PortalApiKeysController } from './account.controller.js';
import { AccountService } from './account.service.js';
import { AccountsRepository } from './accounts.repository.js';
import { AuthFlowsService } from './auth-flows.service.js';
import { AuthController } from './auth.controller.js';
import { LoginThrottle } from './login-throttle.js';
import { LoginTickets } from './login-tickets.js';
import { OrganizationSsoController } from './organization-sso.controller.js';
import { SessionsController } from './sessions.controller.js';
import { SessionsService } from './sessions.service.js';
import { AccountToken } from './entities/account-token.entity.js';
import { RecoveryCode } from './entities/recovery-code.entity.js';
import { Session } from './entities/session.entity.js';
import { User } from './entities/user.entity.js';
import { AuthRouteThrottleGuard } from './auth-route-throttle.js';
import { TotpAttempts } from './totp-attempts.js';
import { TotpService } from './totp.service.js';

/** The entities this module owns (also read by the migration data source). */
export const accountsEntities = [User, Session, AccountToken, RecoveryCode];

/**
 * The managed deployment's /v1 accounts (M1, M2). Imported only when DEPLOYMENT_MODE=managed, so in a
 * self-hosted deployment every /v1 path is 404 and absent from the OpenAPI document (S16).
 */
@Module({
  imports: [AuthModule, AdminModule, TypeOrmModule.forFeature(accountsEntities)],
  controllers: [
    AuthController,
    SessionsController,
    AccountController,
    OrganizationSsoController,
    PortalApiKeysController,
    AuditQueryController,
  ],
  providers: [
    AuditQueryService,
    // The core's audit query asks this module who the caller is and whether they may read the trail.
    { provide: AuditReaders, useClass: AccountAuditReaders },
    AccountService,
    AccountsRepository,
    AuthFlowsService,
    SessionsService,
    LoginThrottle,
    LoginTickets,
    TotpAttempts,
    AuthRouteThrottleGuard,
    TotpService,
  ],
  // The SAML login opens its session through the same service as a password login.
  exports: [SessionsService],
})
export class AccountsModule {}
