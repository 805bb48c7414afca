import { Module } from '@nestjs/common';
import { ApiKeysService } from './api-keys.service.js';
import { AuthFailureThrottle } from './auth-failure-throttle.js';
import { SessionRevocations } from './session-revocations.js';

@Module({
  providers: [ApiKeysService, AuthFailureThrottle, SessionRevocations],
  exports: [ApiKeysService, AuthFailureThrottle, SessionRevocations],
})
export class AuthModule {}
