import { Module } from '@nestjs/common';
import { DeadLettersController } from './dead-letters.controller.js';
import { DeadLettersService } from './dead-letters.service.js';

/** S9 admin endpoints over the failed sets of all queues (the queues themselves come from QueueModule). */
@Module({ controllers: [DeadLettersController], providers: [DeadLettersService] })
export class DeadLettersModule {}
