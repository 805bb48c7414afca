import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxEvent } from './entities/outbox-event.entity.js';
import { EventsService } from './events.service.js';

/** The entities this module owns (also read by the migration data source). */
export const eventsEntities = [OutboxEvent];

@Global()
@Module({ imports: [TypeOrmModule.forFeature(eventsEntities)], providers: [EventsService], exports: [EventsService] })
export class EventsModule {}
