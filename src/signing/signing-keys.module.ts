import { Module } from '@nestjs/common';
import { JwksController, SigningKeysAdminController, SigningKeysController } from './signing-keys.controller.js';
import { SigningKeysService } from './signing-keys.service.js';

/** S8: tenant signing keys. Exports the service for tenant creation and for signing and verification. */
@Module({
  controllers: [SigningKeysAdminController, SigningKeysController, JwksController],
  providers: [SigningKeysService],
  exports: [SigningKeysService],
})
export class SigningKeysModule {}
