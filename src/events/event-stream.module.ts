import { Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { EventStream } from './event-stream.js';
import { EventsController, EventsV1Controller } from './events.controller.js';

/** GET /events (and /v1/events on the managed deployment), in processes that serve the API. */
@Module({})
export class EventStreamModule {
  static register(config: AppConfig): DynamicModule {
    if (!config.runsApi) return { module: EventStreamModule };
    return {
      module: EventStreamModule,
      controllers: [EventsController, ...(config.isManaged ? [EventsV1Controller] : [])],
      providers: [EventStream],
      exports: [EventStream],
    };
  }
}
