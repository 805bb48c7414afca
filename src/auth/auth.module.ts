import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeysService } from './api-keys.service.js';
import { AuthFailureThrottle } from './auth-failure-throttle.js';
import { ApiKey } from './entities/api-key.entity.js';
import { SessionRevocations } from './session-revocations.js';

/** The entities this module owns (also read by the migration data source). */
export const authEntities = [ApiKey];

@Module({
  imports: [TypeOrmModule.forFeature(authEntities)],
  providers: [ApiKeysService, AuthFailureThrottle, SessionRevocations],
  exports: [ApiKeysService, AuthFailureThrottle, SessionRevocations],
})
export class AuthModule {}
