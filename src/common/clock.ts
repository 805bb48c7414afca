import { Global, Module, type DynamicModule } from '@nestjs/common';

/**
 * The service's idea of "now" where a calendar matters (billing periods). One provider, so a test can
 * run the app at another date by handing createApp its own clock instead of mocking the stores.
 */
export abstract class Clock {
  abstract now(): Date;
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}

@Global()
@Module({})
export class ClockModule {
  static register(clock: Clock = new SystemClock()): DynamicModule {
    return { module: ClockModule, providers: [{ provide: Clock, useValue: clock }], exports: [Clock] };
  }
}
