import { Global, Module, type DynamicModule } from '@nestjs/common';
import { CryptoBox } from '../common/crypto-box.js';
import { SealedSecrets } from '../common/sealed-secrets.js';
import { AppConfig } from './app-config.js';

@Global()
@Module({})
export class ConfigModule {
  static register(config: AppConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: AppConfig, useValue: config },
        {
          provide: CryptoBox,
          useFactory: () => new CryptoBox(config.secrets.masterKeys, config.secrets.currentKeyId),
        },
        SealedSecrets,
      ],
      exports: [AppConfig, CryptoBox, SealedSecrets],
    };
  }
}
