import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SealedSecrets } from '../common/sealed-secrets.js';
import { SigningKey } from './entities/signing-key.entity.js';
import { JwksController, SigningKeysAdminController, SigningKeysController } from './signing-keys.controller.js';
import { privateKeyAssociatedData, SigningKeysService } from './signing-keys.service.js';

/** The entities this module owns (also read by the migration data source). */
export const signingKeysEntities = [SigningKey];

/** S8: tenant signing keys. Exports the service for tenant creation and for signing and verification. */
@Module({
  imports: [TypeOrmModule.forFeature(signingKeysEntities)],
  controllers: [SigningKeysAdminController, SigningKeysController, JwksController],
  providers: [SigningKeysService],
  exports: [SigningKeysService],
})
export class SigningKeysModule {
  constructor(sealed: SealedSecrets) {
    // S7: private keys are sealed to their tenant and key id.
    sealed.register({
      table: 'signing_keys',
      column: 'private_key_enc',
      inputs: ['tenant_id', 'key_id'],
      associatedData: (r) => privateKeyAssociatedData({ tenant_id: r.tenant_id, key_id: r.key_id }),
    });
  }
}
